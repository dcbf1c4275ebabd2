package local

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/nvsmi"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepspec"
)

// The evidence passes after the sweep, with the code of the workflow's verbs: the GPU core dump
// pass (`debugflow-step coredump`) and the health snapshot after the run (`debugflow-step
// health`). Each degrades to a "not available on this machine" line, never a failure.

// coredump reruns the crashed (else first failing) test with the driver's core dump on
// exception, as the workflow's step does when the reproducer failed.
func coredump(ctx context.Context, env *steps.Env, s *spec.Spec, opts Options, python string, rep *steps.ReproducerResult, out io.Writer) {
	if !rep.Reproduced {
		// A sweep that timed out may have hung in its bug: say so, as the sanitizer line does.
		fmt.Fprintf(out, "    skipped: %s\n", steps.NoFailureReason(opts.Out, rep))
		return
	}
	// Only an NVIDIA driver writes a GPU core dump: on a machine whose snapshot before the run
	// found no GPU, the reruns (up to coredump.timeout_minutes) could not give one.
	if why := noGPU(opts.Out); why != "" {
		fmt.Fprintf(out, "    skipped: not available on this machine (no NVIDIA GPU: %s)\n", why)
		return
	}
	// The workflow's coredump step (stepspec: each attempt gets its share of the minutes).
	o := stepspec.Coredump(s)
	o.Out, o.Python, o.Dir = opts.Out, python, opts.Dir
	res, err := steps.RunCoredump(ctx, env, o)
	switch {
	case res == nil && err != nil:
		fmt.Fprintf(out, "    core dump pass failed: %v\n", err)
		return
	case res.Cancelled:
		fmt.Fprintln(out, "    cancelled")
		return
	}
	if res.Dump != "" {
		fmt.Fprintf(out, "    GPU core dump: %s\n", filepath.Join(opts.Out, res.Dump))
	}
	if res.Summary != "" {
		fmt.Fprintf(out, "    %s\n", res.Summary)
	}
	if res.Note != "" {
		fmt.Fprintf(out, "    %s\n", onThisMachine(res.Note))
	}
}

// health takes the snapshot after the run and compares it with the one identity took before.
func health(ctx context.Context, env *steps.Env, dir string, out io.Writer) {
	o := stepspec.Health()
	o.Out = dir
	res, err := steps.RunHealth(ctx, env, o)
	switch {
	case err != nil:
		fmt.Fprintf(out, "    health snapshot failed: %v\n", err)
		return
	case res.Unavailable != "":
		fmt.Fprintf(out, "    not available on this machine (%s)\n", res.Unavailable)
	}
	for _, g := range res.Snapshot.GPUs {
		fmt.Fprintf(out, "    %s\n", nvsmi.Describe(res.Snapshot, g))
	}
	for _, f := range append(append([]nvsmi.Finding{}, res.Problems...), res.Changes...) {
		fmt.Fprintf(out, "    %s\n", f)
	}
	switch {
	case res.Suspect():
		fmt.Fprintln(out, "    suspect this machine's GPU (see above)")
	case res.Unavailable != "":
	case len(res.Changes) == 0:
		fmt.Fprintln(out, "    no change since the snapshot before the run")
	}
}

// noGPU says why identity's health snapshot found no GPU ("" when it found one).
func noGPU(dir string) string {
	snap, err := steps.LoadHealth(dir, steps.HealthBefore)
	switch {
	case err != nil:
		return fmt.Sprintf("no health snapshot (%v)", err)
	case len(snap.GPUs) > 0:
		return ""
	}
	if note := healthNote(filepath.Join(dir, steps.HealthQueryFile(steps.HealthBefore))); note != "" {
		return note
	}
	return "nvidia-smi listed no GPU"
}

// healthLine describes a snapshot already written (identity's "before") in one line.
func healthLine(dir, name string) string {
	snap, err := steps.LoadHealth(dir, name)
	if err != nil {
		return fmt.Sprintf("not recorded (%v)", err)
	}
	if len(snap.GPUs) == 0 {
		why := "nvidia-smi listed no GPU"
		if note := healthNote(filepath.Join(dir, steps.HealthQueryFile(name))); note != "" {
			why = note
		}
		return fmt.Sprintf("not available on this machine (%s)", why)
	}
	var gpus []string
	for _, g := range snap.GPUs {
		gpus = append(gpus, nvsmi.Describe(snap, g))
	}
	return strings.Join(gpus, "; ")
}

// healthNote is the "# debugflow: why" line a health file starts with when nvidia-smi gave
// nothing.
func healthNote(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	if sc.Scan() {
		if note, ok := strings.CutPrefix(sc.Text(), steps.HealthNote); ok {
			return note
		}
	}
	return ""
}

// onThisMachine rewords a verb's runner-side note for a local run.
func onThisMachine(note string) string {
	return strings.ReplaceAll(note, "on this runner", "on this machine")
}
