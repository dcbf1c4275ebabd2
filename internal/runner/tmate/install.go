package tmate

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// geteuid is a variable so tests can play root and non-root.
var geteuid = os.Geteuid

// resolveTmate returns the tmate binary to use and a sentence saying how it
// was found: the configured path, PATH, or a fresh apt-get install (through
// sudo -n when not root). When the first install fails (typically stale
// package lists on a fresh runner) it runs apt-get update and tries once more.
func resolveTmate(ctx context.Context, r CommandRunner, configured string, log io.Writer) (path, how string, err error) {
	if configured != "" {
		if _, err := os.Stat(configured); err != nil {
			return "", "", fmt.Errorf("tmate binary %s: %w", configured, err)
		}
		return configured, "using " + configured + " (configured path)", nil
	}
	if p, err := r.LookPath("tmate"); err == nil {
		return p, "using " + p + " (found on PATH)", nil
	}

	var prefix []string
	if geteuid() != 0 {
		if _, err := r.LookPath("sudo"); err != nil {
			return "", "", fmt.Errorf("tmate is not on PATH and cannot be installed: not running as root and sudo is not available; install tmate in an earlier step")
		}
		prefix = []string{"sudo", "-n"}
	}
	install := append(append([]string{}, prefix...), "apt-get", "install", "-y", "tmate")
	update := append(append([]string{}, prefix...), "apt-get", "update")

	fmt.Fprintf(log, "tmate is not on PATH: running %s\n", strings.Join(install, " "))
	if err := r.Run(ctx, log, log, install[0], install[1:]...); err != nil {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		fmt.Fprintf(log, "%s failed (%v): running %s and trying again\n", strings.Join(install, " "), err, strings.Join(update, " "))
		if err := r.Run(ctx, log, log, update[0], update[1:]...); err != nil {
			return "", "", fmt.Errorf("tmate is not on PATH and %s failed: %w (install tmate in an earlier step, or allow passwordless sudo)", strings.Join(update, " "), err)
		}
		if err := r.Run(ctx, log, log, install[0], install[1:]...); err != nil {
			return "", "", fmt.Errorf("tmate is not on PATH and %s failed: %w (install tmate in an earlier step, or allow passwordless sudo)", strings.Join(install, " "), err)
		}
	}
	p, err := r.LookPath("tmate")
	if err != nil {
		return "", "", fmt.Errorf("%s succeeded but tmate is still not on PATH: %w", strings.Join(install, " "), err)
	}
	return p, "installed " + p + " with " + strings.Join(install, " "), nil
}
