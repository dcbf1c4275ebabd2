package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// RefInfoFile names the file that says which ref an artifact folder measured, in an
// experiment across refs (`debugflow experiment`).
const RefInfoFile = "ref.json"

// maxRefInfoBytes bounds the read of a ref.json that may come from anywhere.
const maxRefInfoBytes = 64 << 10

// RefNamePattern is what an experiment's ref name may be: it becomes part of artifact names,
// folder names and Markdown, so it is kept to letters, digits, '.', '_' and '-'.
var RefNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// RefInfo is ref.json: one artifact folder's place in an experiment.
type RefInfo struct {
	// Name is the experiment's label for the ref ("baseline", "pin").
	Name string `json:"name"`
	// Ref is the ref as given (a branch, tag or commit).
	Ref string `json:"ref"`
	// Commit is the commit that was checked out, when known.
	Commit string `json:"commit,omitempty"`
	// Runner is the runner label the reproducer ran on ("local" on this machine).
	Runner string `json:"runner"`
	// Round is the 1-based round of a sequential experiment (--until-decided); 0 for a single
	// sweep.
	Round int `json:"round"`
	// Rounds is the sequential design's planned number of rounds (its looks at the data);
	// 0 for a single sweep. The level of each look depends on it.
	Rounds int `json:"rounds"`
}

// Validate reports what is wrong with r.
func (r RefInfo) Validate() error {
	var problems []string
	if !RefNamePattern.MatchString(r.Name) {
		problems = append(problems, fmt.Sprintf("name %q: want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", r.Name))
	}
	if strings.TrimSpace(r.Ref) == "" || strings.ContainsAny(r.Ref, "\x00\n\r") || len(r.Ref) > 1024 {
		problems = append(problems, fmt.Sprintf("ref %q: want a branch, tag or commit on one line", r.Ref))
	}
	if r.Runner == "" || strings.ContainsAny(r.Runner, "\x00\n\r") || len(r.Runner) > 256 {
		problems = append(problems, fmt.Sprintf("runner %q: want a runner label", r.Runner))
	}
	if r.Round < 0 || r.Rounds < 0 || r.Round > r.Rounds || (r.Rounds > 0 && r.Round == 0) {
		problems = append(problems, fmt.Sprintf("round %d of %d: want 0 of 0 (a single sweep) or 1..N of N", r.Round, r.Rounds))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// WriteRefInfo validates r and writes it to dir/ref.json.
func WriteRefInfo(dir string, r RefInfo) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("%s: %w", RefInfoFile, err)
	}
	if err := ensureDir(dir); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, RefInfoFile), r)
}

// LoadRefInfo reads and validates dir/ref.json. The error wraps fs.ErrNotExist when the
// folder has none (a folder from a plain debug run).
func LoadRefInfo(dir string) (*RefInfo, error) {
	path := filepath.Join(dir, RefInfoFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRefInfoBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxRefInfoBytes {
		return nil, fmt.Errorf("read %s: larger than %d bytes", path, maxRefInfoBytes)
	}
	var r RefInfo
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// RefInfoOptions configures `debugflow-step ref-info`.
type RefInfoOptions struct {
	Out string
	RefInfo
	// Dir is the checkout whose HEAD commit is recorded ("" = the current directory).
	Dir string
}

// RunRefInfo is `debugflow-step ref-info`: it records which ref (and commit) this job of an
// experiment workflow measured, so the report can group artifact folders by ref and runner.
func RunRefInfo(ctx context.Context, env *Env, opts RefInfoOptions) error {
	if err := opts.RefInfo.Validate(); err != nil {
		return usagef("%v", err)
	}
	r := opts.RefInfo
	if r.Commit == "" {
		args := []string{"rev-parse", "HEAD"}
		if opts.Dir != "" {
			args = append([]string{"-C", opts.Dir}, args...)
		}
		if out, err := env.runCapture(ctx, 30*time.Second, "git", args...); err == nil {
			r.Commit = strings.TrimSpace(out.Stdout)
		} else {
			env.warnf("commit of %s not recorded: %v", r.Ref, err)
		}
	}
	if err := WriteRefInfo(opts.Out, r); err != nil {
		return err
	}
	commit := r.Commit
	if commit == "" {
		commit = "commit unknown"
	}
	fmt.Fprintf(env.Stdout, "ref-info: %s = %s (%s) on %s", r.Name, r.Ref, commit, r.Runner)
	if r.Rounds > 0 {
		fmt.Fprintf(env.Stdout, ", round %d of %d", r.Round, r.Rounds)
	}
	fmt.Fprintln(env.Stdout)
	return nil
}

func newCmdRefInfo(env *Env) *cobra.Command {
	var o RefInfoOptions
	cmd := &cobra.Command{
		Use:   "ref-info",
		Short: "Write ref.json: which ref, commit and runner this job of an experiment measured",
		Example: `  # in a job of the experiment workflow, after the checkout
  debugflow-step ref-info --out /tmp/repro --name "$REF_NAME" --ref "$REF" --runner "$RUNNER" \
    --round "$ROUND" --rounds "$ROUNDS"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return RunRefInfo(cmd.Context(), env, o) },
	}
	f := cmd.Flags()
	addOut(f, &o.Out)
	f.StringVar(&o.Name, "name", "", "the experiment's name for the ref (letters, digits, '.', '_', '-')")
	f.StringVar(&o.Ref, "ref", "", "the ref as given (branch, tag or commit)")
	f.StringVar(&o.Commit, "commit", "", "the commit checked out (default: git rev-parse HEAD in --dir)")
	f.StringVar(&o.Runner, "runner", "", "the runner label")
	f.IntVar(&o.Round, "round", 0, "round of a sequential experiment (0: a single sweep)")
	f.IntVar(&o.Rounds, "rounds", 0, "planned rounds of the sequential experiment (0: a single sweep)")
	f.StringVar(&o.Dir, "dir", "", "checkout whose HEAD is recorded (default: the current directory)")
	return cmd
}
