package earlysignal

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestTake: a signal that arrives before Take is kept for it (not acted on by the default
// action, which would end this test binary), and Take hands it over once.
func TestTake(t *testing.T) {
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(ch) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the signal never arrived")
		}
		time.Sleep(time.Millisecond)
	}
	if sig, ok := Take(); !ok || sig != syscall.SIGINT {
		t.Errorf("Take = %v, %v; want interrupt, true", sig, ok)
	}
	if sig, ok := Take(); ok {
		t.Errorf("second Take = %v, want nothing", sig)
	}
}
