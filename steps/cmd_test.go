package steps

import (
	"os"
	"testing"
)

func TestExitCodeFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{os.ErrNotExist, 1},
		{usagef("x"), 2},
		{&ExitError{Code: 143}, 143},
		{&ExitError{Code: 5, Err: usagef("wrapped usage")}, 5},
	}
	for _, tt := range tests {
		if got := ExitCodeFor(tt.err); got != tt.want {
			t.Errorf("ExitCodeFor(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
