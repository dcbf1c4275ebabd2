package exitcode

import (
	"errors"
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"plain", errors.New("x"), Failure},
		{"coded", &Error{Code: Usage, Err: errors.New("bad flag")}, Usage},
		{"wrapped", fmt.Errorf("context: %w", &Error{Code: 130}), 130},
	}
	for _, tt := range tests {
		if got := Of(tt.err); got != tt.want {
			t.Errorf("%s: Of = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestMessage(t *testing.T) {
	if got := (&Error{Code: 3}).Error(); got != "exit status 3" {
		t.Errorf("nil Err: %q", got)
	}
	inner := errors.New("inner")
	e := &Error{Code: 1, Err: inner}
	if e.Error() != "inner" || !errors.Is(e, inner) {
		t.Errorf("message %q, Is %v", e.Error(), errors.Is(e, inner))
	}
}
