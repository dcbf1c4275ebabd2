package steps

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// sanitizerVersionTimeout bounds `compute-sanitizer --version`.
const sanitizerVersionTimeout = 60 * time.Second

// CheckSanitizerOptions configures `debugflow-step check-sanitizer`.
type CheckSanitizerOptions struct {
	// Sanitizer is an explicit compute-sanitizer path (default: search like sanitize).
	Sanitizer string
}

// RunCheckSanitizer is `debugflow-step check-sanitizer`: right after the install step, it
// finds compute-sanitizer where the sanitize step will look and prints its version, so a
// missing or broken tool fails the job in seconds instead of after the build and the sweep.
// The version is recorded in system_identity.txt by `identity --after-build`.
func RunCheckSanitizer(ctx context.Context, env *Env, opts CheckSanitizerOptions) error {
	path, err := FindSanitizer(env, opts.Sanitizer)
	if err != nil {
		env.Action.Errorf("%v", err)
		env.checkSummary(fmt.Sprintf("## Setup failed: compute-sanitizer is missing\n\n%s\n", err))
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("check-sanitizer: %w", err)}
	}
	out, err := env.runCapture(ctx, sanitizerVersionTimeout, path, "--version")
	if err != nil {
		env.Action.Errorf("compute-sanitizer at %s does not run: %v", path, err)
		env.checkSummary(fmt.Sprintf("## Setup failed: compute-sanitizer does not run\n\n%s: %s\n", markdownCode(path), err))
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("check-sanitizer: %w", err)}
	}
	fmt.Fprintf(env.Stdout, "check-sanitizer: %s\n%s\n", path, strings.TrimSpace(out.Stdout))
	return nil
}

// checkSummary adds md to the step summary ($GITHUB_STEP_SUMMARY, stdout in a terminal).
func (e *Env) checkSummary(md string) {
	if e.Getenv("GITHUB_STEP_SUMMARY") == "" {
		fmt.Fprint(e.Stdout, md)
		return
	}
	e.Action.AddStepSummary(md)
}
