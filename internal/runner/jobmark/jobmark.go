// Package jobmark is job.json, the marker that makes an evidence folder one job's own: which
// run, attempt and job created the folder and when. `debugflow-step init` writes it as the
// job's first step, into a folder it creates fresh (under the runner's temporary folder, so
// two runner agents on one host never share it); `summary` and `verdict` set aside any file
// older than the marker (one the job did not write) and record its name here, so `report`
// can say what was left over without trusting a downloaded artifact's file times.
package jobmark

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/atomicfile"
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/readfile"
	"github.com/debugflow/debugflow/internal/textsafe"
)

// File is the marker's name in an evidence folder.
const File = evidencefiles.JobMarker

// LeftoverDir is the subfolder the files another job left behind are moved to: out of the
// way of every reader, still in the artifact for whoever wants to look.
const LeftoverDir = evidencefiles.LeftoverDir

// maxBytes bounds the read of a job.json.
const maxBytes = 64 << 10

// maxLeftovers bounds the names recorded (a folder full of another job's files says how many).
const maxLeftovers = 100

// Marker is job.json.
type Marker struct {
	// RunID, RunAttempt and Job are GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT and GITHUB_JOB ("local"
	// and empty outside GitHub Actions).
	RunID      string `json:"run_id"`
	RunAttempt string `json:"run_attempt"`
	Job        string `json:"job"`
	// Created is when the folder was made this job's; a file older than it is not the job's.
	Created time.Time `json:"created"`
	// Leftovers are the files found in the folder that this job did not write, moved to
	// LeftoverDir; LeftoverCount counts them all when there were more than the names kept.
	Leftovers     []string `json:"leftovers,omitempty"`
	LeftoverCount int      `json:"leftover_count,omitempty"`
}

// Run names the run of m in one line: "run 4242 attempt 1, job debug".
func (m Marker) Run() string {
	s := "run " + m.RunID
	if m.RunAttempt != "" {
		s += " attempt " + m.RunAttempt
	}
	if m.Job != "" {
		s += ", job " + m.Job
	}
	return s
}

// idPattern is what a run id, attempt or job id may be (they become part of a folder name).
var idPattern = lazyre.New(`^[A-Za-z0-9_.-]{0,100}$`)

// Validate reports what is wrong with m.
func (m Marker) Validate() error {
	var problems []string
	for _, f := range []struct{ name, v string }{{"run_id", m.RunID}, {"run_attempt", m.RunAttempt}, {"job", m.Job}} {
		if !idPattern.MatchString(f.v) {
			problems = append(problems, fmt.Sprintf("%s %q: want up to 100 letters, digits, '.', '_' or '-'", f.name, f.v))
		}
	}
	if m.Created.IsZero() {
		problems = append(problems, "created: missing")
	}
	for _, n := range m.Leftovers {
		if n == "" || textsafe.Active(n) || len(n) > 1024 {
			problems = append(problems, fmt.Sprintf("leftovers: %q is not a file name", n))
			break
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// FromEnv is the marker of the job getenv describes (GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT,
// GITHUB_JOB), created now; outside GitHub Actions the run is "local".
func FromEnv(getenv func(string) string, now time.Time) Marker {
	m := Marker{RunID: getenv("GITHUB_RUN_ID"), RunAttempt: getenv("GITHUB_RUN_ATTEMPT"), Job: getenv("GITHUB_JOB"), Created: now}
	if m.RunID == "" {
		m.RunID = "local"
	}
	return m
}

// FolderPrefix is the start of the name of the folder New creates for m:
// debugflow-<run>-<attempt>-<job>-; the rest is random, so two jobs of one run that share a
// temporary folder (matrix legs under act) still get folders of their own.
func (m Marker) FolderPrefix() string {
	parts := []string{"debugflow", m.RunID}
	for _, p := range []string{m.RunAttempt, m.Job} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "-") + "-"
}

// New creates a fresh folder of m's own under root and writes the marker into it.
func New(root string, m Marker) (string, error) {
	if err := m.Validate(); err != nil {
		return "", fmt.Errorf("%s: %w", File, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", root, err)
	}
	dir, err := os.MkdirTemp(root, m.FolderPrefix())
	if err != nil {
		return "", fmt.Errorf("create the evidence folder under %s: %w", root, err)
	}
	// MkdirTemp makes it 0700; the tmate shell's user and the upload read it as the job does.
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", fmt.Errorf("evidence folder %s: %w", dir, err)
	}
	return dir, writeFirst(dir, m)
}

// ErrNotEvidence is the error of Reset for a folder that holds files and no valid marker: not
// an evidence folder (a home folder, a checkout), so not the job's to empty.
var ErrNotEvidence = errors.New("not a debugflow evidence folder")

// Reset empties dir (creating it when missing) and writes m into it: a folder the caller
// names (a rerun in the same place) becomes this job's, with nothing of an earlier one. Only
// a new or empty folder or an evidence folder (one with a valid marker, of an earlier init or
// `debugflow local`) is emptied; any other folder is left as it is, and the error wraps
// ErrNotEvidence.
func Reset(dir string, m Marker) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("%s: %w", File, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	if len(entries) > 0 {
		if _, err := Load(dir); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s holds %d file(s) and no %s: %w", dir, len(entries), File, ErrNotEvidence)
		} else if err != nil {
			return fmt.Errorf("%s holds %d file(s) and no valid %s (%v): %w", dir, len(entries), File, err, ErrNotEvidence)
		}
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("empty %s for this job: %w", dir, err)
		}
	}
	return writeFirst(dir, m)
}

// writeFirst writes the marker of a job's folder for the first time, with Created on the file
// system's clock: the kernel stamps files with a coarse clock (a tick of a few milliseconds,
// or seconds on some file systems), so a file this job writes right after the marker could
// otherwise look older than a Created read from Go's fine clock, and be set aside as an
// earlier job's.
func writeFirst(dir string, m Marker) error {
	if err := Write(dir, m); err != nil {
		return err
	}
	info, err := os.Stat(filepath.Join(dir, File))
	if err != nil {
		return fmt.Errorf("%s: %w", File, err)
	}
	if mod := info.ModTime(); mod.Before(m.Created) {
		m.Created = mod
		return Write(dir, m)
	}
	return nil
}

// Write validates m and writes dir/job.json atomically.
func Write(dir string, m Marker) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("%s: %w", File, err)
	}
	return atomicfile.WriteJSON(filepath.Join(dir, File), m)
}

// Load reads and validates dir/job.json; the error wraps fs.ErrNotExist when the folder has
// none (a folder of a workflow generated before the marker, or of a step run by hand).
func Load(dir string) (*Marker, error) {
	path := filepath.Join(dir, File)
	f, _, err := readfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	m, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Parse reads a job.json from r (at most 64 KiB) and validates it.
func Parse(r io.Reader) (*Marker, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(b) > maxBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxBytes)
	}
	var m Marker
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// SetAside moves every entry of dir older than the marker (one this job did not write) into
// dir/leftover and records their names in the marker, which it returns. A folder without a
// marker is left as it is (nil, nil): nothing says which files are the job's. It runs in the
// job, on the folder the job wrote, where file times are the job's own (a downloaded
// artifact's are not: readers of one trust the names recorded here).
func SetAside(dir string) (*Marker, error) {
	m, err := Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return m, fmt.Errorf("read %s: %w", dir, err)
	}
	var found []string
	for _, e := range entries {
		name := e.Name()
		if name == File || name == LeftoverDir {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		if info.ModTime().Before(m.Created) {
			found = append(found, name)
		}
	}
	if len(found) == 0 {
		return m, nil
	}
	aside := filepath.Join(dir, LeftoverDir)
	if err := os.MkdirAll(aside, 0o755); err != nil {
		return m, fmt.Errorf("create %s: %w", aside, err)
	}
	for _, name := range found {
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(aside, name)); err != nil {
			return m, fmt.Errorf("set aside %s (left by an earlier job): %w", name, err)
		}
		m.LeftoverCount++
		if len(m.Leftovers) < maxLeftovers && !slices.Contains(m.Leftovers, name) {
			m.Leftovers = append(m.Leftovers, name)
		}
	}
	return m, Write(dir, *m)
}

// Describe says in one sentence what was left over in the folder of m ("" when nothing).
func (m *Marker) Describe() string {
	if m == nil || m.LeftoverCount == 0 {
		return ""
	}
	names := strings.Join(m.Leftovers, ", ")
	if m.LeftoverCount > len(m.Leftovers) {
		names += fmt.Sprintf(" and %d more", m.LeftoverCount-len(m.Leftovers))
	}
	return fmt.Sprintf("%d file(s) in the evidence folder were not written by %s (left by an earlier job) and were ignored, moved to %s/: %s",
		m.LeftoverCount, m.Run(), LeftoverDir, names)
}
