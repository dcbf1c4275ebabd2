// Package refrun runs a spec's reproducer against git refs and hands back one artifact folder
// per (ref, runner): the seam experiments across refs (`debugflow experiment`) and noisy
// bisection build on. Two runners implement it:
//
//   - Local checks every ref out in its own `git worktree`, sets it up there once as the
//     workflow's job sets a runner up (package jobsetup; a Python virtual environment of its
//     own), and runs the reproducer as a full sweep on this machine.
//   - GitHub dispatches the generated experiment workflow once per sweep (a matrix over refs
//     x runner labels, the refs passed as a JSON input), watches the run and downloads the
//     matrix's artifacts.
//
// Every folder it returns holds what the reproduce step writes (reproducer.log,
// reproducer_summary.json, ...) and a ref.json (package refinfo) naming its ref, commit,
// runner and round.
package refrun

import (
	"context"
	"fmt"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
)

// Ref is one ref of an experiment: a short name (refinfo.NamePattern) and the branch, tag or
// commit it stands for.
type Ref struct {
	Name string
	Ref  string
}

// String is "name=ref".
func (r Ref) String() string { return r.Name + "=" + r.Ref }

// ParseRef reads "[NAME=]REF"; without a name, def is used, else one is made from the ref
// ("duburcqa/turing_pin" becomes "duburcqa-turing_pin").
func ParseRef(s, def string) (Ref, error) {
	name, ref, ok := strings.Cut(s, "=")
	if !ok {
		name, ref = def, s
		if name == "" {
			name = nameFromRef(ref)
		}
	}
	r := Ref{Name: name, Ref: strings.TrimSpace(ref)}
	if err := r.Validate(); err != nil {
		return Ref{}, err
	}
	return r, nil
}

// Validate checks the name and the ref.
func (r Ref) Validate() error {
	if !refinfo.NamePattern.MatchString(r.Name) {
		return fmt.Errorf("ref name %q: use 1 to 64 letters, digits, '.', '_' or '-' (write NAME=REF)", r.Name)
	}
	if r.Ref == "" || strings.HasPrefix(r.Ref, "-") || strings.ContainsAny(r.Ref, " \t\n\r\x00") || len(r.Ref) > 1024 {
		return fmt.Errorf("ref %q (%s): want a branch, tag or commit", r.Ref, r.Name)
	}
	return nil
}

// nameFromRef turns a ref into a name: characters outside the name alphabet become '-'.
func nameFromRef(ref string) string {
	b := []byte(ref)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	s := strings.Trim(string(b), "-._")
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// CheckRefs rejects duplicate names: every name labels its folders.
func CheckRefs(refs []Ref) error {
	seen := map[string]bool{}
	for _, r := range refs {
		if err := r.Validate(); err != nil {
			return err
		}
		if seen[r.Name] {
			return fmt.Errorf("two refs are named %q: name them apart with NAME=REF", r.Name)
		}
		seen[r.Name] = true
	}
	return nil
}

// Sweep is one run of the reproducer against every ref.
type Sweep struct {
	Refs []Ref
	// Count is pytest-repeat's --count for every ref.
	Count int
	// Round and Rounds place the sweep in a sequential design (0 and 0 for a single sweep);
	// they are recorded in each folder's ref.json.
	Round, Rounds int
	// Out is the folder that receives this sweep's artifact folders.
	Out string
}

// Artifact is one (ref, runner) folder of a sweep.
type Artifact struct {
	Ref    Ref
	Runner string
	Dir    string
}

// Runner runs sweeps. Run may be called several times (the rounds of a sequential
// experiment); Close releases what the runner set up (worktrees) and must be called.
type Runner interface {
	Run(ctx context.Context, sw Sweep) ([]Artifact, error)
	Close() error
}

// check validates a sweep.
func (sw Sweep) check() error {
	if len(sw.Refs) == 0 {
		return fmt.Errorf("no refs to run")
	}
	if sw.Count < 1 {
		return fmt.Errorf("count %d: want at least 1 repetition", sw.Count)
	}
	if sw.Out == "" {
		return fmt.Errorf("no output folder")
	}
	return CheckRefs(sw.Refs)
}
