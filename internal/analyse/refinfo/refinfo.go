// Package refinfo is ref.json, the file that says which ref an artifact folder of an
// experiment measured: the experiment's name for the ref, the ref as given, the commit that
// was checked out, the runner label and the round of a sequential design. `debugflow-step
// ref-info` writes it on a runner, the local experiment on this machine; the report groups
// folders by it. Any ref.json may come from anywhere: reads are bounded and validated.
package refinfo

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/atomicfile"
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/readfile"
	"github.com/debugflow/debugflow/internal/textsafe"
)

// File is the file's name in an artifact folder.
const File = evidencefiles.RefInfo

// maxBytes bounds the read of a ref.json.
const maxBytes = 64 << 10

// NamePattern is what an experiment's ref name may be: it becomes part of artifact names,
// folder names, Markdown and Mermaid, so it is kept to letters, digits, '.', '_' and '-'.
var NamePattern = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Info is ref.json.
type Info struct {
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
	// Rounds is the sequential design's planned number of rounds (its looks at the data); 0
	// for a single sweep. The level of each look depends on it.
	Rounds int `json:"rounds"`
}

// Validate reports everything that is wrong with i at once.
func (i Info) Validate() error {
	var problems []string
	if !NamePattern.MatchString(i.Name) {
		problems = append(problems, fmt.Sprintf("name %q: want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", i.Name))
	}
	if strings.TrimSpace(i.Ref) == "" || textsafe.Active(i.Ref) || len(i.Ref) > 1024 {
		problems = append(problems, fmt.Sprintf("ref %q: want a branch, tag or commit on one line, without control characters", i.Ref))
	}
	if i.Runner == "" || textsafe.Active(i.Runner) || len(i.Runner) > 256 {
		problems = append(problems, fmt.Sprintf("runner %q: want a runner label without control characters", i.Runner))
	}
	if textsafe.Active(i.Commit) || len(i.Commit) > 256 {
		problems = append(problems, fmt.Sprintf("commit %q: want a commit id", i.Commit))
	}
	if i.Round < 0 || i.Rounds < 0 || i.Round > i.Rounds || (i.Rounds > 0 && i.Round == 0) {
		problems = append(problems, fmt.Sprintf("round %d of %d: want 0 of 0 (a single sweep) or 1..N of N", i.Round, i.Rounds))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// Write validates i and writes dir/ref.json (dir is created when missing).
func Write(dir string, i Info) error {
	if err := i.Validate(); err != nil {
		return fmt.Errorf("%s: %w", File, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return atomicfile.WriteJSON(filepath.Join(dir, File), i)
}

// Load reads and validates dir/ref.json. The error wraps fs.ErrNotExist when the folder has
// none (a folder from a plain debug run).
func Load(dir string) (*Info, error) {
	path := filepath.Join(dir, File)
	// A FIFO or a device is refused before it is opened: opening a FIFO waits for a writer.
	f, _, err := readfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxBytes {
		return nil, fmt.Errorf("read %s: larger than %d bytes", path, maxBytes)
	}
	var i Info
	if err := json.Unmarshal(b, &i); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if err := i.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &i, nil
}
