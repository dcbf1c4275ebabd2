package steps

import (
	"context"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"path/filepath"
	"strings"
	"time"
)

// sanitizerVersionTimeout bounds `compute-sanitizer --version`.
const sanitizerVersionTimeout = 60 * time.Second

// CheckSanitizerOptions configures `debugflow-step check-sanitizer`.
type CheckSanitizerOptions struct {
	// Sanitizer is an explicit compute-sanitizer path (default: search like sanitize).
	Sanitizer string `flag:"sanitizer" usage:"compute-sanitizer path (default: search like sanitize)"`
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
	san, sanFrom := sanitizerCUDA(ctx, env, path)
	libs, libsFrom := librariesCUDA(env)
	if san == "" || libs == "" {
		fmt.Fprintf(env.Stdout, "check-sanitizer: CUDA of compute-sanitizer %s, of the CUDA libraries %s\n", cudaOrUnknown(san, sanFrom), cudaOrUnknown(libs, libsFrom))
		return nil
	}
	fmt.Fprintf(env.Stdout, "check-sanitizer: compute-sanitizer of CUDA %s (%s), CUDA libraries %s (%s)\n", san, sanFrom, libs, libsFrom)
	if san != libs {
		// Not a failure: an older sanitizer often works, but it may not know the newer
		// libraries' kernels and report nothing, or fail to attach.
		env.Action.Warningf("compute-sanitizer is from CUDA %s (%s) but the CUDA libraries are %s (%s): it may miss errors or fail on kernels built for %s; install the sanitizer of the same release (cuda-sanitizer-%s)",
			san, sanFrom, libs, libsFrom, libs, strings.ReplaceAll(libs, ".", "-"))
	}
	return nil
}

var (
	reCUDAInPath = lazyre.New(`/cuda-(\d+\.\d+)(?:\.\d+)?/`)
	reMajorMinor = lazyre.New(`^(\d+\.\d+)`)
)

// sanitizerCUDA is the CUDA release a compute-sanitizer belongs to, and how that is known: the
// /usr/local/cuda-X.Y it lives in (through links), else the distribution's nvidia-cuda-toolkit
// package. "" when neither says.
func sanitizerCUDA(ctx context.Context, env *Env, path string) (version, from string) {
	resolved, _ := filepath.EvalSymlinks(path)
	for _, p := range []string{path, resolved} {
		if m := reCUDAInPath.FindStringSubmatch(p); m != nil {
			return m[1], "in cuda-" + m[1]
		}
	}
	out, err := env.runCapture(ctx, 10*time.Second, "dpkg-query", "-W", "-f=${Version}", "nvidia-cuda-toolkit")
	if m := reMajorMinor.FindStringSubmatch(strings.TrimSpace(out.Stdout)); err == nil && m != nil {
		return m[1], "nvidia-cuda-toolkit " + strings.TrimSpace(out.Stdout)
	}
	return "", ""
}

// librariesCUDA is the newest /usr/local/cuda-X.Y, where the CUDA libraries the build uses are.
func librariesCUDA(env *Env) (version, from string) {
	for _, d := range cudaBinDirs(env) {
		if m := reCUDAInPath.FindStringSubmatch(d); m != nil {
			return m[1], strings.TrimSuffix(d, "/bin")
		}
	}
	return "", ""
}

func cudaOrUnknown(version, from string) string {
	if version == "" {
		return "unknown"
	}
	return version + " (" + from + ")"
}

// checkSummary adds md to the step summary ($GITHUB_STEP_SUMMARY, stdout in a terminal).
func (e *Env) checkSummary(md string) {
	if e.Getenv("GITHUB_STEP_SUMMARY") == "" {
		fmt.Fprint(e.Stdout, md)
		return
	}
	e.Action.AddStepSummary(md)
}
