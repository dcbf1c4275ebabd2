package factory

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	var out, errOut bytes.Buffer
	f := New(strings.NewReader("{}"), &out, &errOut)
	if f.Getenv == nil || f.IO.In == nil || f.IO.Out != &out || f.IO.ErrOut != &errOut {
		t.Fatalf("unset fields: %+v", f)
	}
	if f.IO.IsTTY {
		t.Error("IsTTY with buffers for streams")
	}
	if New(nil, nil, nil).IO.Out != os.Stdout {
		t.Error("a nil stream is not the process's own")
	}
}

// TestIsTTY: only character devices are terminals; a buffer never is.
func TestIsTTY(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if !charDevice(null) || charDevice(&bytes.Buffer{}) {
		t.Error("charDevice: /dev/null is one, a buffer is not")
	}
}

func TestEnvAndDir(t *testing.T) {
	f := &Factory{Getenv: func(k string) string { return "v-" + k }}
	if f.Env("Y") != "v-Y" || f.Dir() != "." || f.Stdout() == nil || f.Stderr() == nil {
		t.Error("Env, Dir or the streams' fallbacks")
	}
}
