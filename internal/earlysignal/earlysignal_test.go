package earlysignal

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// A signal sent to the process after init waits in the channel Handover returns until the
// program reads it (instead of the default action ending this test binary), and only once.
func TestHandoverHoldsWhatCameEarly(t *testing.T) {
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	ch := Handover()
	select {
	case sig := <-ch:
		if sig != syscall.SIGINT {
			t.Errorf("got %v, want interrupt", sig)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the signal never arrived")
	}
	if Handover() != ch {
		t.Error("Handover returned another channel the second time")
	}
	select {
	case sig := <-ch:
		t.Errorf("a second signal %v that was never sent", sig)
	default:
	}
}
