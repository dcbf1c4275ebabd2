//go:build linux

package report

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a real pseudo-terminal pair (what `script` or an ssh session gives a program).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		t.Fatalf("unlockpt: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Fatalf("ptsname: %v", errno)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

func TestIsTerminalOnPTY(t *testing.T) {
	_, slave := openPTY(t)
	if !isTerminal(slave) {
		t.Error("a pseudo-terminal is not taken for a terminal")
	}
}

// On a real terminal, with colour on, the only escape sequences are the report's own colours:
// the ones the logs carry arrive as visible text.
func TestLogEscapesNeverReachATerminal(t *testing.T) {
	master, slave := openPTY(t)
	dir := hostileDir(t)
	done := make(chan error, 1)
	go func() {
		done <- RunReport(context.Background(), &Options{Dirs: []string{dir}, Stdout: slave, Getenv: func(string) string { return "" }})
		slave.Close()
	}()
	out, _ := io.ReadAll(master) // ends with EIO once the slave is closed
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(out), "\r\n", "\n") // the line discipline's ONLCR
	if !strings.Contains(text, ansiRed+"yes"+ansiReset) {
		t.Fatalf("no colour on a terminal:\n%q", text)
	}
	for _, own := range []string{ansiReset, ansiBold, ansiRed, ansiGreen, ansiYellow} {
		text = strings.ReplaceAll(text, own, "")
	}
	if bad := terminalActive(text); bad != "" {
		t.Errorf("the terminal received %q:\n%s", bad, text)
	}
	if !strings.Contains(text, `gw1\x1b]0;owned\x07`) {
		t.Errorf("the worker name is not shown as visible text:\n%s", text)
	}
}
