package testenv

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// StartHeldInInit starts cmd and holds it inside its package initialisation, after package
// pkg (an import path) has been initialised and before main runs, so a test can signal a
// program that is still starting, without sleeps. The init trace (GODEBUG=inittrace=1) goes to
// a one-page pipe the test stops reading after pkg's line: the lines of the packages still to
// come fill it and the program blocks writing them. release drains the pipe, lets the program
// go on and returns its stderr from there on. It fails the test when pkg never initialises
// (waiting for cmd to end) or when fewer than a page of init lines followed it (the hold would
// not be sure).
func StartHeldInInit(t testing.TB, cmd *exec.Cmd, pkg string) (release func() []byte) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	const fSetPipeSz = 1031 // F_SETPIPE_SZ
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), fSetPipeSz, 4096); errno != 0 {
		t.Fatalf("F_SETPIPE_SZ: %v", errno)
	}
	cmd.Env = append(cmd.Environ(), "GODEBUG=inittrace=1")
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var trace bytes.Buffer
	br := bufio.NewReaderSize(r, 16) // read no further than needed (the minimum size)
	for {
		line, err := br.ReadString('\n')
		trace.WriteString(line)
		if strings.HasPrefix(line, "init "+pkg+" ") {
			break
		}
		if err != nil {
			cmd.Wait()
			t.Fatalf("package %s never initialised before %s ended; its init trace:\n%s", pkg, cmd.Path, trace.String())
		}
	}
	return func() []byte {
		rest, _ := io.ReadAll(io.MultiReader(br, r))
		// More init trace than the pipe and the reader hold: the program was blocked in init.
		held := 0
		for _, line := range bytes.SplitAfter(rest, []byte("\n")) {
			if bytes.HasPrefix(line, []byte("init ")) {
				held += len(line)
			}
		}
		if held <= 4096+16 {
			t.Errorf("only %d bytes of init trace followed %s: the program may have reached main before the test signalled it", held, pkg)
		}
		return rest
	}
}
