package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/steps"
)

// TestAuditAndValidateStopOnCtrlC: checking a large workflow takes seconds of parsing that
// cannot be interrupted from inside; Ctrl-C (a cancelled context) still ends audit and
// validate at once with exit 130, instead of after the whole check (SIGINT used to be ignored
// until then). The context is cancelled before the call, so the outcome does not depend on
// timing: without the fix the check runs to its end and exits 1.
func TestAuditAndValidateStopOnCtrlC(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("on: push\npermissions: {contents: read}\njobs:\n  j:\n    runs-on: ubuntu-latest\n    timeout-minutes: 5\n    steps:\n")
	for i := 0; i < 4000; i++ {
		fmt.Fprintf(&b, "      - run: echo ${{ github.head_ref }} %s\n", strings.Repeat("x", 400))
	}
	writeFile(t, filepath.Join(dir, "big.yml"), b.String())
	t.Chdir(dir)
	for _, args := range [][]string{{"audit", "big.yml"}, {"validate", "big.yml"}} {
		t.Run(args[0], func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var out bytes.Buffer
			start := time.Now()
			code := run(ctx, args, strings.NewReader(""), &out, &out)
			if code != 130 {
				t.Errorf("exit %d after %v, want 130 (interrupted):\n%.500s", code, time.Since(start), out.String())
			}
			if strings.Contains(out.String(), "big.yml:8:") {
				t.Errorf("findings printed after the interrupt:\n%.500s", out.String())
			}
		})
	}
}

// TestInterruptContextNamesTheSignal: the first signal cancels the context with a cause naming
// it, so a local run stopped by SIGTERM records SIGTERM (exit 143 in its summary), not SIGINT.
func TestInterruptContextNamesTheSignal(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	ctx, stop := interruptContext(sigs)
	defer stop()
	sigs <- syscall.SIGTERM
	<-ctx.Done()
	var sc *steps.SignalCause
	if !errors.As(context.Cause(ctx), &sc) || sc.Signal != syscall.SIGTERM {
		t.Errorf("cause %v, want SIGTERM", context.Cause(ctx))
	}
}
