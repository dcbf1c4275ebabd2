package steps

import "testing"

func TestFirstLine(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"error: boom\nmore", "error: boom"},
		{"single", "single"},
		{"Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'xdist'\n",
			"ModuleNotFoundError: No module named 'xdist'"},
	}
	for _, tt := range tests {
		if got := firstLine(tt.in); got != tt.want {
			t.Errorf("firstLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
