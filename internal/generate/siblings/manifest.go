package siblings

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"github.com/debugflow/debugflow/internal/readfile"
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
const manifestHeader = "# Workflows that `debugflow disable` renamed to <name>.disabled, with a fingerprint of what it renamed; `debugflow enable` renames exactly these back if they are unchanged, then deletes this file.\n"

// manifest is the manifest file as found before a run.
type manifest struct {
	exists bool
	raw    []byte // the file's bytes, to restore it after a failure
	// entries maps each original workflow file name to the fingerprint of the
	// file Disable renamed ("" in a record from before fingerprints).
	entries map[string]string
}

func (m *manifest) sorted() []string {
	return sortedNames(m.entries)
}

func (m *manifest) has(name string) bool {
	_, ok := m.entries[name]
	return ok
}

func sortedNames[V any](set map[string]V) []string {
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
	// The record comes with the branch, so it may be someone else's: a link (to /dev/zero, to
	// a FIFO) or a huge file would be read for ever. Disable writes a regular file, small.
	info, err := fsys.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &manifest{entries: map[string]string{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: it is %s, not a regular file: debugflow disable writes its record as a plain file, "+
			"so this one is not its record; delete it (and rename back the workflows you want by hand)", path, readfile.Kind(info.Mode()))
	}
	raw, err := fsys.ReadFile(path)
	if err == nil && (info.Size() > maxManifestBytes || len(raw) > maxManifestBytes) {
		err = fmt.Errorf("it is larger than %d MiB, which no record of debugflow disable is; delete it (and rename back the workflows you want by hand)", maxManifestBytes>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	entries, err := parseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (fix the line, or delete the file if its record is wrong)", path, err)
	}
	return &manifest{exists: true, raw: raw, entries: entries}, nil
}

// fingerprintRe is a manifest line's fingerprint prefix: "sha256:<64 hex>  ".
var fingerprintRe = lazyre.New(`^(sha256:[0-9a-f]{64})  `)

// fingerprint identifies the file Disable renamed: the SHA-256 of its bytes,
// or of its target for a symbolic link (the link itself is renamed).
func fingerprint(fsys fileSystem, path string) (string, error) {
	info, err := fsys.Lstat(path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := fsys.Readlink(path)
		if err != nil {
			return "", err
		}
		h.Write([]byte("symlink\x00" + target))
	} else {
		data, err := fsys.ReadFile(path)
		if err != nil {
			return "", err
		}
		h.Write(data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// maxManifestBytes bounds the whole record: thousands of workflow names.
const maxManifestBytes = 1 << 20

// maxManifestLine bounds one line of a manifest (file names are at most
// 255 bytes on common file systems).
const maxManifestLine = 4096

// parseManifest reads a manifest: one original workflow file name per line,
// after its fingerprint and two spaces ("sha256:<hex>  ci.yml"; a line
// without a fingerprint, as older versions wrote, is a bare name); empty
// lines and lines starting with # are ignored, a trailing \r is dropped. The
// name must be a workflow file name (*.yml or *.yaml, no directory part).
func parseManifest(r io.Reader) (map[string]string, error) {
	entries := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxManifestLine)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fp := ""
		if m := fingerprintRe.FindStringSubmatch(line); m != nil {
			fp, line = m[1], line[len(m[0]):]
		}
		if !isWorkflow(line) || strings.ContainsAny(line, "/\x00\r") || !recordable(line) {
			return nil, fmt.Errorf("line %d: %q is not a workflow file name (want an original name such as ci.yml)", lineNo, line)
		}
		entries[line] = fp
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	return entries, nil
}

// renderManifest is the manifest of entries: the header, then one line per
// name, sorted by name, each after its fingerprint when it has one.
func renderManifest(entries map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString(manifestHeader)
	for _, n := range sortedNames(entries) {
		if fp := entries[n]; fp != "" {
			b.WriteString(fp + "  ")
		}
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
// renames into the entries of the existing list that still hold (and writes
// the file when it changes); Enable deletes it.
func planManifest(opts Options, dir direction, old *manifest, p *plan) manifestChange {
	c := manifestChange{path: filepath.Join(opts.Dir, ManifestName), old: old}
	if dir == enable {
		if old.exists {
			c.op = manifestRemove
		}
		return c
	}
	entries := make(map[string]string, len(p.record)+len(p.moves))
	for n, fp := range p.record {
		entries[n] = fp
	}
	for _, mv := range p.moves {
		entries[mv.from] = p.fingerprints[mv.from]
	}
	c.content = renderManifest(entries)
	c.count = len(entries)
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
