package steps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/nvsmi"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// Runner health snapshots: nvidia-smi -q and --query-gpu CSV, at the start of the job
// (identity takes "before") and at its end (the health verb takes "after"). Their comparison
// says whether the GPU itself degraded during the run.

// Names of the two snapshots the workflow takes.
const (
	HealthBefore = "before"
	HealthAfter  = "after"
)

// healthTimeout bounds one nvidia-smi call (a GPU in trouble can make it hang).
const healthTimeout = 60 * time.Second

// HealthNote starts a line that debugflow writes into a health file instead of (or before)
// nvidia-smi's output, saying why there is none: "# debugflow: nvidia-smi: not found".
const HealthNote = "# debugflow: "

// HealthCancelled starts the note of a snapshot a cancel cut short.
const HealthCancelled = evidencefiles.HealthCancelled

// HealthQueryFile and HealthCSVFile are the files of snapshot name: the -q text and the
// --query-gpu CSV.
func HealthQueryFile(name string) string { return evidencefiles.HealthQuery(name) }

// HealthCSVFile is the --query-gpu CSV of snapshot name.
func HealthCSVFile(name string) string { return evidencefiles.HealthCSV(name) }

// HealthOptions configures `debugflow-step health`.
type HealthOptions struct {
	Out string `flag:"out" default:"/tmp/repro" usage:"artifact directory (created if missing)" emit:"always"`
	// Name names the snapshot: gpu_health_NAME.txt and .csv.
	Name string `flag:"name" default:"after" emit:"always" usage:"snapshot name: writes gpu_health_NAME.txt and gpu_health_NAME.csv"`
	// Since is the earlier snapshot to compare with ("" for none; the verb defaults it to
	// "before" for any other name).
	Since string `flag:"since" usage:"compare with this earlier snapshot (default before; \"\" for none)"`
}

// HealthResult is one snapshot and, with Since, what changed since the earlier one.
type HealthResult struct {
	Snapshot nvsmi.Snapshot
	// Unavailable says why nvidia-smi gave nothing ("" when it did).
	Unavailable string
	// Changes are the findings of the comparison with Since; Problems the bad states of this
	// snapshot.
	Changes  []nvsmi.Finding
	Problems []nvsmi.Finding
}

// Suspect reports whether the snapshot or the change since the earlier one points at the
// hardware.
func (r *HealthResult) Suspect() bool {
	return nvsmi.AnySuspect(r.Changes) || nvsmi.AnySuspect(r.Problems)
}

// RunHealth is `debugflow-step health`: it takes snapshot Name, compares it with Since, prints
// both and sets the outputs gpu_uuid, health_changed and suspect. A runner without
// nvidia-smi gets its "not available" note in the files and exits 0: health is evidence, never
// a reason to fail the job.
func RunHealth(ctx context.Context, env *Env, opts HealthOptions) (*HealthResult, error) {
	if opts.Name == "" || strings.ContainsAny(opts.Name, `/\`) || opts.Name != filepath.Base(opts.Name) {
		return nil, usagef("--name %q: want a plain name such as before or after", opts.Name)
	}
	if err := ensureDir(opts.Out); err != nil {
		return nil, err
	}
	res, err := TakeHealth(ctx, env, opts.Out, opts.Name)
	if err != nil {
		return nil, err
	}
	printHealth(env, opts.Name, res)
	changed := false
	if opts.Since != "" && opts.Since != opts.Name {
		before, err := LoadHealth(opts.Out, opts.Since)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(env.Stdout, "health: no %q snapshot to compare with (%s missing)\n", opts.Since, HealthQueryFile(opts.Since))
		case err != nil:
			return res, err
		case ctx.Err() != nil && len(res.Snapshot.GPUs) == 0:
			// nvidia-smi was stopped by the cancel, not failed by the GPU: nothing to compare.
			fmt.Fprintf(env.Stdout, "health: %s: not compared with %q\n", HealthCancelled, opts.Since)
		case len(before.GPUs) > 0:
			// Also when nvidia-smi now fails: a GPU seen before the run and not after it
			// (fallen off the bus, lost by the driver) is missing after the run, suspect.
			res.Changes = nvsmi.Compare(before, res.Snapshot)
			changed = len(res.Changes) > 0
			printChanges(env, opts.Since, opts.Name, res.Changes, nvsmi.Blind(before, res.Snapshot))
		}
	}
	uuids := make([]string, 0, len(res.Snapshot.GPUs))
	for _, g := range res.Snapshot.GPUs {
		uuids = append(uuids, g.UUID)
	}
	if res.Suspect() {
		var what []string
		for _, f := range append(append([]nvsmi.Finding{}, res.Problems...), res.Changes...) {
			if f.Suspect {
				what = append(what, f.String())
			}
		}
		env.warnf("suspect the runner's GPU: %s", strings.Join(what, "; "))
	}
	env.setOutput("gpu_uuid", strings.Join(uuids, ","))
	env.setOutput("health_changed", strconv.FormatBool(changed))
	env.setOutput("suspect", strconv.FormatBool(res.Suspect()))
	return res, nil
}

// TakeHealth runs nvidia-smi -q and nvidia-smi --query-gpu=... --format=csv, writes their
// output to the snapshot's files and returns the merged snapshot. When nvidia-smi is missing or
// fails, the files hold a HealthNote line saying so and Unavailable says why.
func TakeHealth(ctx context.Context, env *Env, out, name string) (*HealthResult, error) {
	res := &HealthResult{}
	q, qerr := env.runCapture(ctx, healthTimeout, "nvidia-smi", "-q")
	qerr = withOutput(qerr, q)
	csvOut, notes, cerr := queryGPU(ctx, env)
	if ctx.Err() != nil {
		// A cancel (Ctrl-C, the job's end) cut nvidia-smi short: its failure says nothing about
		// the GPU, and the note says so (the report compares nothing with such a snapshot).
		if qerr != nil {
			qerr = fmt.Errorf("%s: %w", HealthCancelled, qerr)
		}
		if cerr != nil {
			cerr = fmt.Errorf("%s: %w", HealthCancelled, cerr)
		}
	}
	if err := writeHealthFile(filepath.Join(out, HealthQueryFile(name)), q.Stdout, qerr); err != nil {
		return nil, err
	}
	if err := writeHealthFile(filepath.Join(out, HealthCSVFile(name)), notes+csvOut.Stdout, cerr); err != nil {
		return nil, err
	}
	snap, err := loadHealthFiles(out, name)
	if err != nil {
		return nil, err
	}
	res.Snapshot = snap
	if len(snap.GPUs) == 0 {
		switch {
		case qerr != nil:
			res.Unavailable = qerr.Error()
		case cerr != nil:
			res.Unavailable = cerr.Error()
		default:
			res.Unavailable = "nvidia-smi listed no GPU"
		}
	}
	res.Problems = nvsmi.Problems(snap)
	return res, nil
}

// maxFieldRetries bounds how often queryGPU asks again without a field the driver rejected.
const maxFieldRetries = 6

// queryGPU runs nvidia-smi --query-gpu=QueryFields --format=csv. A driver that rejects a field
// ("Field "X" is not a valid field to query.") is asked again with the field's other name
// (nvsmi.RenamedField), else without it, so one unknown field never costs the others; notes
// are HealthNote lines saying what was left out. When the failure names no field, the fields
// every driver knows (nvsmi.CoreQueryFields) are tried once.
func queryGPU(ctx context.Context, env *Env) (out captured, notes string, err error) {
	fields := slices.Clone(nvsmi.QueryFields)
	renamed := map[string]bool{}
	for range maxFieldRetries + 1 {
		out, err = env.runCapture(ctx, healthTimeout, "nvidia-smi", "--query-gpu="+strings.Join(fields, ","), "--format=csv")
		if err == nil || strings.HasSuffix(err.Error(), ": not found") || ctx.Err() != nil {
			return out, notes, withOutput(err, out)
		}
		bad := nvsmi.RejectedField(out.Stdout + "\n" + out.Stderr)
		i := slices.Index(fields, bad)
		if i < 0 {
			break
		}
		if alt := nvsmi.RenamedField(bad); alt != "" && !renamed[bad] && !slices.Contains(fields, alt) {
			renamed[alt] = true
			fields[i] = alt
			notes += HealthNote + "this driver rejects " + bad + ": asked for " + alt + "\n"
			continue
		}
		fields = slices.Delete(fields, i, i+1)
		notes += HealthNote + "this driver rejects " + bad + ": asked without it\n"
		if len(fields) == 0 {
			break
		}
	}
	if core, cerr := env.runCapture(ctx, healthTimeout, "nvidia-smi", "--query-gpu="+strings.Join(nvsmi.CoreQueryFields, ","), "--format=csv"); cerr == nil {
		return core, notes + HealthNote + "the full query failed (" + oneLine(withOutput(err, out).Error()) + "): the fields every driver knows\n", nil
	}
	return out, notes, withOutput(err, out)
}

// withOutput adds the first line nvidia-smi printed to err when err does not say why:
// nvidia-smi writes its errors ("NVIDIA-SMI has failed because it couldn't communicate with
// the NVIDIA driver...") to stdout.
func withOutput(err error, out captured) error {
	if err == nil || strings.TrimSpace(out.Stderr) != "" {
		return err
	}
	line := firstLine(strings.TrimSpace(out.Stdout))
	if line == "" {
		return err
	}
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "..."
	}
	return fmt.Errorf("%w: %s", err, line)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// writeHealthFile writes a command's output, after a HealthNote line when it failed.
func writeHealthFile(path, output string, runErr error) error {
	var b strings.Builder
	if runErr != nil {
		b.WriteString(HealthNote + oneLine(runErr.Error()) + "\n")
	}
	b.WriteString(output)
	if err := atomicWrite(path, []byte(b.String())); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// LoadHealth reads snapshot name back from its files. The error wraps fs.ErrNotExist when the
// snapshot was never taken.
func LoadHealth(out, name string) (nvsmi.Snapshot, error) {
	if _, err := os.Stat(filepath.Join(out, HealthQueryFile(name))); err != nil {
		return nvsmi.Snapshot{}, fmt.Errorf("health snapshot %q: %w", name, err)
	}
	return loadHealthFiles(out, name)
}

// healthMaxBytes bounds the read of a health snapshot file (nvidia-smi -q of eight GPUs is
// some 100 KB).
const healthMaxBytes = 16 << 20

func loadHealthFiles(out, name string) (nvsmi.Snapshot, error) {
	var q, c nvsmi.Snapshot
	if b, err := readEvidenceFile(filepath.Join(out, HealthQueryFile(name)), healthMaxBytes); err == nil {
		if q, err = nvsmi.ParseQuery(bytes.NewReader(b)); err != nil {
			return q, fmt.Errorf("read %s: %w", HealthQueryFile(name), err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return q, fmt.Errorf("read %s: %w", HealthQueryFile(name), err)
	}
	if b, err := readEvidenceFile(filepath.Join(out, HealthCSVFile(name)), healthMaxBytes); err == nil {
		c, _ = nvsmi.ParseCSV(bytes.NewReader(b)) // ErrNoHeader: nvidia-smi failed, the note says why
	}
	return nvsmi.Merge(q, c), nil
}

// printHealth prints one line per GPU: what it is and its health counters.
func printHealth(env *Env, name string, r *HealthResult) {
	if r.Unavailable != "" {
		fmt.Fprintf(env.Stdout, "health %s: not available on this runner (%s)\n", name, r.Unavailable)
		return
	}
	for _, g := range r.Snapshot.GPUs {
		fmt.Fprintf(env.Stdout, "health %s: %s\n", name, nvsmi.Describe(r.Snapshot, g))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(env.Stdout, "health %s: %s\n", name, p)
	}
}

// printChanges prints the changes; "no change" says when the counters could not show one
// (blind: nvsmi.Blind).
func printChanges(env *Env, since, name string, changes []nvsmi.Finding, blind []string) {
	switch {
	case len(changes) == 0 && len(blind) > 0:
		fmt.Fprintf(env.Stdout, "health: no change seen from %s to %s, but the counters cannot show one (%s)\n", since, name, strings.Join(blind, "; "))
		return
	case len(changes) == 0:
		fmt.Fprintf(env.Stdout, "health: no change from %s to %s\n", since, name)
		return
	}
	for _, c := range changes {
		fmt.Fprintf(env.Stdout, "health: %s to %s: %s\n", since, name, c)
	}
}
