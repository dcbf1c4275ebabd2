package siblings

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// ManifestName is the file, in the workflows directory, in which Disable
// records the original names of the workflows it renamed. Enable renames
// exactly those back and deletes it, so workflows a repository keeps
// disabled on purpose stay disabled. GitHub ignores it (it is not YAML).
const ManifestName = ".debugflow-disabled"

// manifestHeader is the first line of every manifest Disable writes.
const manifestHeader = "# Workflows that `debugflow disable` renamed to <name>.disabled, one per line; `debugflow enable` renames exactly these back, then deletes this file.\n"

// ErrNoManifest is wrapped by the error of an Enable refused because the
// workflows directory has disabled workflows but no manifest: nothing says
// which of them Disable renamed. Nothing was renamed.
var ErrNoManifest = errors.New("no record of what debugflow disable renamed")

// manifest is the manifest file as found before a run.
type manifest struct {
	exists bool
	raw    []byte          // the file's bytes, to restore it after a failure
	names  map[string]bool // original workflow file names
}

func (m *manifest) sorted() []string {
	return sortedNames(m.names)
}

func sortedNames(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// readManifest reads dir's manifest; a missing one is an empty manifest
// with exists false.
func readManifest(fsys fileSystem, dir string) (*manifest, error) {
	path := filepath.Join(dir, ManifestName)
	raw, err := fsys.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &manifest{names: map[string]bool{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	names, err := parseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (fix the line, or delete the file if its record is wrong)", path, err)
	}
	return &manifest{exists: true, raw: raw, names: names}, nil
}

// maxManifestLine bounds one line of a manifest (file names are at most
// 255 bytes on common file systems).
const maxManifestLine = 4096

// parseManifest reads a manifest: one original workflow file name per line;
// empty lines and lines starting with # are ignored, a trailing \r is
// dropped. Any other line must be a workflow file name (*.yml or *.yaml,
// no directory part).
func parseManifest(r io.Reader) (map[string]bool, error) {
	names := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxManifestLine)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !isWorkflow(line) || strings.ContainsAny(line, "/\x00\r") {
			return nil, fmt.Errorf("line %d: %q is not a workflow file name (want an original name such as ci.yml)", lineNo, line)
		}
		names[line] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	return names, nil
}

// renderManifest is the manifest listing names: the header, then the names
// sorted, one per line.
func renderManifest(names map[string]bool) []byte {
	var b bytes.Buffer
	b.WriteString(manifestHeader)
	for _, n := range sortedNames(names) {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// recordable reports whether name survives a round trip through the
// manifest: a line break would split it, a leading # makes it a comment.
func recordable(name string) bool {
	return !strings.ContainsAny(name, "\n\r") && !strings.HasPrefix(name, "#")
}

// manifestOp is what a run does to the manifest.
type manifestOp int

const (
	manifestNone      manifestOp = iota // absent, and stays absent
	manifestUnchanged                   // present, and already right
	manifestWrite                       // (re)written, then staged
	manifestRemove                      // deleted, and removed from the index
)

// manifestChange is the planned change to the manifest and, once applied,
// whether Git's index was updated too.
type manifestChange struct {
	op      manifestOp
	path    string
	old     *manifest
	content []byte // for manifestWrite
	count   int    // names listed after the run
	inGit   bool   // set when applied: the index was updated
}

// planManifest decides the manifest's fate: Disable merges the names it
// renames into the existing list (and writes the file when it changes);
// Enable deletes it.
func planManifest(opts Options, dir direction, old *manifest, p *plan) manifestChange {
	c := manifestChange{path: filepath.Join(opts.Dir, ManifestName), old: old}
	if dir == enable {
		if old.exists {
			c.op = manifestRemove
		}
		return c
	}
	names := make(map[string]bool, len(old.names)+len(p.moves))
	for n := range old.names {
		names[n] = true
	}
	for _, mv := range p.moves {
		names[mv.from] = true
	}
	c.content = renderManifest(names)
	c.count = len(names)
	c.op = manifestWrite
	if old.exists && bytes.Equal(old.raw, c.content) {
		c.op = manifestUnchanged
	}
	return c
}

// note is the line printed after the table, "" when there is nothing to
// say.
func (c *manifestChange) note(dryRun bool) string {
	switch c.op {
	case manifestUnchanged:
		return fmt.Sprintf("%s unchanged: it lists %d workflow(s) for debugflow enable", c.path, c.count)
	case manifestWrite:
		switch {
		case dryRun:
			return fmt.Sprintf("would write %s listing %d workflow(s) for debugflow enable", c.path, c.count)
		case c.inGit:
			return fmt.Sprintf("wrote and staged %s listing %d workflow(s) for debugflow enable", c.path, c.count)
		}
		return fmt.Sprintf("wrote %s listing %d workflow(s) for debugflow enable", c.path, c.count)
	case manifestRemove:
		switch {
		case dryRun:
			return fmt.Sprintf("would delete %s", c.path)
		case c.inGit:
			return fmt.Sprintf("deleted %s (git rm --cached)", c.path)
		}
		return fmt.Sprintf("deleted %s", c.path)
	}
	return ""
}
