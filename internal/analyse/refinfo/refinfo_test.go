package refinfo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteLoadRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	want := Info{Name: "pin", Ref: "duburcqa/turing_stream_pin_experiment", Commit: "0123abc", Runner: "gpu-t4-4-core", Round: 2, Rounds: 8}
	if err := Write(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil || *got != want {
		t.Errorf("Load = %+v, %v; want %+v", got, err, want)
	}
}

func TestValidate(t *testing.T) {
	ok := Info{Name: "a", Ref: "main", Runner: "r"}
	tests := []struct {
		name string
		edit func(*Info)
		want string
	}{
		{"name with a slash", func(i *Info) { i.Name = "a/b" }, `name "a/b"`},
		{"name with markdown", func(i *Info) { i.Name = "x|y" }, "name"},
		{"name too long", func(i *Info) { i.Name = strings.Repeat("a", 65) }, "name"},
		{"empty ref", func(i *Info) { i.Ref = " " }, "ref"},
		{"ref on two lines", func(i *Info) { i.Ref = "a\nb" }, "ref"},
		{"no runner", func(i *Info) { i.Runner = "" }, "runner"},
		// ref.json comes back in an artifact the code under test could rewrite: nothing in it
		// may act on the terminal that prints it.
		{"runner retitles the terminal", func(i *Info) { i.Runner = "gpu\x1b]0;pwned\a" }, "runner"},
		{"ref with an 8-bit CSI", func(i *Info) { i.Ref = "main\u009b2J" }, "ref"},
		{"commit with a bidi override", func(i *Info) { i.Commit = "c0ffee\u202e" }, "commit"},
		{"runner not UTF-8", func(i *Info) { i.Runner = "gpu\xff" }, "runner"},
		{"round without rounds", func(i *Info) { i.Round = 3 }, "round 3 of 0"},
		{"round past rounds", func(i *Info) { i.Round, i.Rounds = 5, 4 }, "round 5 of 4"},
		{"rounds without a round", func(i *Info) { i.Rounds = 4 }, "round 0 of 4"},
	}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		i := ok
		tt.edit(&i)
		if err := i.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
		if err := Write(t.TempDir(), i); err == nil {
			t.Errorf("%s: written", tt.name)
		}
	}
	// Every problem at once.
	err := Info{Name: "/", Ref: "", Runner: ""}.Validate()
	if err == nil || strings.Count(err.Error(), ";") != 2 {
		t.Errorf("all problems: %v", err)
	}
}

func TestLoadHostileFiles(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"not json", "{", "parse"},
		{"bad name", `{"name":"../x","ref":"main","runner":"r"}`, "name"},
		{"huge", `{"name":"a","ref":"` + strings.Repeat("x", maxBytes) + `"}`, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, File), []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load = %v, want an error with %q", err, tt.want)
			}
		})
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing ref.json: %v", err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, File), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Error("a directory named ref.json was read")
	}
}

func FuzzLoad(f *testing.F) {
	f.Add(`{"name":"pin","ref":"duburcqa/x","commit":"abc","runner":"gpu-t4","round":2,"rounds":8}`)
	f.Add(`{"name":"a","ref":"main","runner":"r","round":0,"rounds":0}`)
	f.Add(`{"name":"../x","ref":"","runner":"r","round":-1}`)
	f.Fuzz(func(t *testing.T, content string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, File), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		info, err := Load(dir)
		if err != nil {
			return
		}
		if err := info.Validate(); err != nil {
			t.Fatalf("Load returned an invalid Info %+v: %v", info, err)
		}
		again := t.TempDir()
		if err := Write(again, *info); err != nil {
			t.Fatalf("Write of a loaded Info: %v", err)
		}
		back, err := Load(again)
		if err != nil || *back != *info {
			t.Fatalf("round trip %+v -> %+v, %v", info, back, err)
		}
	})
}
