package gantt

import (
	"strings"
	"testing"
)

func TestTaskName(t *testing.T) {
	const keep = "._-/=[](),+ "
	for _, tt := range []struct{ in, want string }{
		{"test_x[cuda-3-50]", "test_x[cuda-3-50]"},
		{"title x", "_title x"},
		{"Title", "_Title"},
		{"titles", "titles"},
		{"call", "_call"},
		{"call_me", "call_me"},
		{"click me", "_click me"},
		{"gantt[x]", "_gantt[x]"},
		{"accTitle", "_accTitle"},
		{"accDescr", "_accDescr"},
		{"section x", "_section x"},
		{"excludes weekends", "_excludes weekends"},
		{"weekday monday", "_weekday monday"},
		{"2024-01-31 x", "_2024-01-31 x"},
		{"2024-01-31x", "2024-01-31x"},
		{"a:b#c;d`e", "a_b_c_d_e"},
		{"", "_"},
		{"   ", "_"},
		{"%%{init}%%", "___init___"},
	} {
		if got := TaskName(tt.in, keep, 0); got != tt.want {
			t.Errorf("TaskName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// '%' kept on request is still a comment at the start of a task line.
	if got := TaskName("%%x", "%", 0); got != "_%%x" {
		t.Errorf("TaskName(%%%%x) = %q", got)
	}
	if got := Text(strings.Repeat("a", 100), "", 60); len(got) != 60 || !strings.HasSuffix(got, "...") {
		t.Errorf("cut: %q", got)
	}
}

func FuzzTaskName(f *testing.F) {
	for _, s := range []string{"title x", "a:b", "2024-01-31 x", "%%", "accTitle", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := TaskName(s, "._-/=[](),+ %", 60)
		if got == "" || strings.ContainsAny(got, ":#;`\n\r") || StartsLikeStatement(strings.TrimLeft(got, " ")+" :") {
			t.Fatalf("TaskName(%q) = %q", s, got)
		}
	})
}
