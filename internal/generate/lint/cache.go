package lint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// shellcheck's verdict on a script depends only on the script, the flags and the shellcheck
// binary, so it is kept: generate and validate check the same dozen scripts on every call,
// and each shellcheck process costs about 30 ms of start-up. A cache entry is the comments
// of one script, keyed by those three (the binary by its path, size and modification time,
// which a package upgrade changes), in $XDG_CACHE_HOME/debugflow/shellcheck.

// CacheEnv names the cache folder ("off" for none).
const CacheEnv = "DEBUGFLOW_SHELLCHECK_CACHE"

// maxCacheEntries bounds the folder: beyond it the oldest entries are removed.
const maxCacheEntries = 4096

// maxCacheEntry bounds one entry's file.
const maxCacheEntry = 1 << 20

// shellcheckCache keeps the comments of checked scripts; a nil cache keeps nothing.
type shellcheckCache struct {
	dir string
	// binary identifies the shellcheck executable and the flags.
	binary string
}

// openShellcheckCache returns the cache for exe run with args, or nil when there is none
// (turned off, no cache folder, exe cannot be read).
func openShellcheckCache(exe string, args []string) *shellcheckCache {
	dir := os.Getenv(CacheEnv)
	if dir == "off" {
		return nil
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(base, "debugflow", "shellcheck")
	}
	path, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return &shellcheckCache{dir: dir, binary: fmt.Sprintf("%s\x00%d\x00%d\x00%s", path, fi.Size(), fi.ModTime().UnixNano(), strings.Join(args, "\x00"))}
}

func (c *shellcheckCache) path(content string) string {
	h := sha256.New()
	io.WriteString(h, c.binary)
	io.WriteString(h, "\x00")
	io.WriteString(h, content)
	return filepath.Join(c.dir, hex.EncodeToString(h.Sum(nil))[:40]+".json")
}

// get returns the comments cached for a script's content (File empty), ok false on a miss.
func (c *shellcheckCache) get(content string) (comments []shellcheckComment, ok bool) {
	if c == nil {
		return nil, false
	}
	f, err := os.Open(c.path(content))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxCacheEntry {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCacheEntry))
	if err != nil || json.Unmarshal(data, &comments) != nil {
		return nil, false
	}
	if len(comments) == 0 {
		return nil, true // as a clean script's comments are when shellcheck ran
	}
	return comments, true
}

// put stores a script's comments (their File is dropped); errors only cost a later miss.
func (c *shellcheckCache) put(content string, comments []shellcheckComment) {
	if c == nil {
		return
	}
	clean := make([]shellcheckComment, len(comments))
	for i, cm := range comments {
		cm.File = ""
		clean[i] = cm
	}
	data, err := json.Marshal(clean)
	if err != nil || os.MkdirAll(c.dir, 0o755) != nil {
		return
	}
	p := c.path(content)
	tmp, err := os.CreateTemp(c.dir, ".entry*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		return
	}
	os.Rename(tmp.Name(), p)
}

// prune removes the oldest entries beyond maxCacheEntries.
func (c *shellcheckCache) prune() {
	if c == nil {
		return
	}
	entries, err := os.ReadDir(c.dir)
	if err != nil || len(entries) <= maxCacheEntries {
		return
	}
	type entry struct {
		name string
		mod  time.Time
	}
	var all []entry
	for _, e := range entries {
		if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".json") {
			all = append(all, entry{e.Name(), info.ModTime()})
		}
	}
	slices.SortFunc(all, func(a, b entry) int { return b.mod.Compare(a.mod) })
	for _, e := range all[min(len(all), maxCacheEntries):] {
		os.Remove(filepath.Join(c.dir, e.name))
	}
}
