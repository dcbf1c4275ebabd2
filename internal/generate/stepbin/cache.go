package stepbin

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/readfile"
)

// A bundled debugflow-step depends only on the debugflow executable that bundles it: that
// executable was checked against its source (VerifySource) when the binary was first built,
// and the build is reproducible (BuildFlags). So the binary of one executable, Go version and
// architecture is built once and kept in a cache; every later generate of that executable
// reads it back instead of running go build (about 1 s warm, a minute cold), with the same
// bytes and so the same pinned checksum.

// cacheEntries is how many step binaries the cache keeps: every rebuild of debugflow makes a
// new key, and the oldest entries are removed beyond this count.
const cacheEntries = 8

// CacheOff as Options.CacheDir (DEBUGFLOW_STEP_CACHE=off) turns the cache off.
const CacheOff = "off"

// maxCacheMeta bounds the entry's metadata file.
const maxCacheMeta = 64 << 10

// BinaryCache keeps the step binaries built for one debugflow executable.
type BinaryCache struct {
	// Dir holds the entries (os.UserCacheDir()/debugflow/step-binaries by default).
	Dir string
	// Key names this executable: the SHA-256 of its bytes and the Go version it runs on.
	Key string
}

// cacheMeta is what an entry records beside the binary.
type cacheMeta struct {
	// SHA256 is the binary's checksum: an entry whose bytes do not match it is rebuilt.
	SHA256 string `json:"sha256"`
	// Source is the builder's Describe() when it was built, repeated in generate's message.
	Source string `json:"source"`
	// Size is the binary's size: an entry whose binary has another is not used.
	Size int64 `json:"size"`
}

// DefaultCacheDir is where step binaries are cached: $XDG_CACHE_HOME/debugflow/step-binaries
// (~/.cache on Linux, ~/Library/Caches on macOS).
func DefaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "debugflow", "step-binaries"), nil
}

// OpenCache returns the cache of the running executable in dir ("" for DefaultCacheDir).
func OpenCache(dir string) (*BinaryCache, error) {
	if dir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return nil, fmt.Errorf("finding the cache folder: %w", err)
		}
		dir = d
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this debugflow's executable: %w", err)
	}
	key, err := executableKey(exe)
	if err != nil {
		return nil, err
	}
	return &BinaryCache{Dir: dir, Key: key}, nil
}

// executableKey names the executable exe: its Go build ID when it has one (read from the
// ELF note in microseconds; the ID ends with the hash of the linked content, which is how go
// itself tells binaries apart), else the SHA-256 of its bytes (a -buildid= release build, or
// a Mach-O executable: about 40 ms for 24 MB). The Go version is part of the key.
func executableKey(exe string) (string, error) {
	h := sha256.New()
	if id := elfBuildID(exe); id != "" {
		io.WriteString(h, "buildid\x00"+id)
	} else {
		f, _, err := readfile.Open(exe)
		if err != nil {
			return "", fmt.Errorf("reading this debugflow's executable: %w", err)
		}
		defer f.Close()
		io.WriteString(h, "content\x00")
		if _, err := io.Copy(h, io.LimitReader(f, 1<<30)); err != nil {
			return "", fmt.Errorf("reading this debugflow's executable: %w", err)
		}
	}
	io.WriteString(h, "\x00"+runtime.Version())
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// elfBuildID is the Go build ID of an ELF executable ("" when it has none): the description
// of the "Go" note in its .note.go.buildid section.
func elfBuildID(exe string) string {
	f, err := elf.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil || sec.Size > 4096 {
		return ""
	}
	note, err := sec.Data()
	if err != nil || len(note) < 16 {
		return ""
	}
	order := f.ByteOrder
	nameSize, descSize := order.Uint32(note[0:4]), order.Uint32(note[4:8])
	if nameSize != 4 || string(note[12:16]) != "Go\x00\x00" || uint64(16)+uint64(descSize) > uint64(len(note)) {
		return ""
	}
	return string(note[16 : 16+descSize])
}

func (c *BinaryCache) paths(goarch string) (bin, meta string) {
	base := filepath.Join(c.Dir, c.Key+"-linux-"+goarch)
	return base, base + ".json"
}

// Get returns what was built for linux/goarch: its SHA-256 (recorded when it was stored),
// the builder's description then, and a loader of its bytes (File.Bytes checks them against
// the checksum); ok is false when there is no entry or its binary is missing or of another
// size. The binary itself is not read here: a generate to stdout only pins its checksum.
func (c *BinaryCache) Get(goarch string) (sum, source string, load func() ([]byte, error), ok bool) {
	binPath, metaPath := c.paths(goarch)
	raw, err := readCapped(metaPath, maxCacheMeta)
	if err != nil {
		return "", "", nil, false
	}
	var meta cacheMeta
	if json.Unmarshal(raw, &meta) != nil || len(meta.SHA256) != 64 || meta.Size <= 0 {
		return "", "", nil, false
	}
	if fi, err := os.Stat(binPath); err != nil || !fi.Mode().IsRegular() || fi.Size() != meta.Size {
		return "", "", nil, false
	}
	// The newest use decides which entries stay (prune).
	now := time.Now()
	os.Chtimes(metaPath, now, now)
	return meta.SHA256, meta.Source, func() ([]byte, error) { return readBounded(binPath) }, true
}

// Put stores the binary built for linux/goarch, then removes the oldest entries beyond
// cacheEntries. The binary is written before its metadata, so an interrupted Put leaves
// no entry that Get would return.
func (c *BinaryCache) Put(goarch string, data []byte, source string) error {
	binPath, metaPath := c.paths(goarch)
	if err := writeAtomic(binPath, data); err != nil {
		return err
	}
	meta, err := json.Marshal(cacheMeta{SHA256: Sum(data), Source: source, Size: int64(len(data))})
	if err != nil {
		return err
	}
	if err := writeAtomic(metaPath, meta); err != nil {
		return err
	}
	c.prune()
	return nil
}

// prune removes the entries beyond the newest cacheEntries, oldest first, and binaries
// left without metadata by an interrupted Put.
func (c *BinaryCache) prune() {
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return
	}
	type entry struct {
		base string
		mod  int64
	}
	var metas []entry
	bins := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") {
			continue
		}
		if base, ok := strings.CutSuffix(name, ".json"); ok {
			if info, err := e.Info(); err == nil {
				metas = append(metas, entry{base, info.ModTime().UnixNano()})
			}
			continue
		}
		bins[name] = true
	}
	slices.SortFunc(metas, func(a, b entry) int { return int(sign(b.mod - a.mod)) })
	for i, m := range metas {
		if i < cacheEntries {
			delete(bins, m.base)
			continue
		}
		os.Remove(filepath.Join(c.Dir, m.base+".json"))
	}
	for name := range bins {
		os.Remove(filepath.Join(c.Dir, name))
	}
}

func sign(x int64) int64 {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// readCapped reads a regular file of at most limit bytes.
func readCapped(p string, limit int64) ([]byte, error) {
	f, _, err := readfile.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, limit)
	}
	return data, nil
}
