package steps

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// SanitizerPackage is the Debian/Ubuntu package that ships compute-sanitizer.
const SanitizerPackage = "nvidia-cuda-toolkit"

// sanitizerSystemDirs are searched after $PATH and /usr/local/cuda*/bin:
// where the Debian/Ubuntu nvidia-cuda-toolkit package puts the tool.
var sanitizerSystemDirs = []string{"/usr/bin", "/usr/lib/nvidia-cuda-toolkit/bin", "/usr/lib/nvidia-cuda-toolkit/compute-sanitizer"}

// SanitizerNotFoundError lists where compute-sanitizer was looked for.
type SanitizerNotFoundError struct {
	Explicit string
	Searched []string
}

// Error names the places searched and how to install the tool.
func (e *SanitizerNotFoundError) Error() string {
	if e.Explicit != "" {
		return fmt.Sprintf("compute-sanitizer: --sanitizer %s is not an executable file", e.Explicit)
	}
	return fmt.Sprintf("compute-sanitizer not found; searched $PATH and %s; install the CUDA toolkit "+
		"(apt-get install %s, or NVIDIA's cuda-toolkit) or pass --sanitizer PATH",
		strings.Join(e.Searched, ", "), SanitizerPackage)
}

// FindSanitizer locates compute-sanitizer: the explicit path when given,
// else $PATH, /usr/local/cuda*/bin (newest version first), then the
// Debian/Ubuntu toolkit directories.
func FindSanitizer(env *Env, explicit string) (string, error) {
	if explicit != "" {
		if isExecutable(explicit) {
			return explicit, nil
		}
		return "", &SanitizerNotFoundError{Explicit: explicit}
	}
	if p, err := env.LookPath("compute-sanitizer"); err == nil {
		return p, nil
	}
	dirs := cudaBinDirs(env)
	dirs = append(dirs, sanitizerSystemDirs...)
	for _, d := range dirs {
		p := env.sysPath(filepath.Join(d, "compute-sanitizer"))
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", &SanitizerNotFoundError{Searched: append([]string{"/usr/local/cuda*/bin"}, sanitizerSystemDirs...)}
}

var reCudaVersion = lazyre.New(`^cuda-(\d+)(?:\.(\d+))?(?:\.(\d+))?$`)

// cudaBinDirs lists /usr/local/cuda-X.Y/bin newest first, then
// /usr/local/cuda/bin (usually a symlink to one of them).
func cudaBinDirs(env *Env) []string {
	matches, _ := filepath.Glob(env.sysPath("/usr/local/cuda*"))
	type dir struct {
		name string
		ver  [3]int
	}
	var versioned []dir
	plain := false
	for _, m := range matches {
		base := filepath.Base(m)
		if base == "cuda" {
			plain = true
			continue
		}
		sm := reCudaVersion.FindStringSubmatch(base)
		if sm == nil {
			continue
		}
		var v [3]int
		for i := range v {
			v[i], _ = strconv.Atoi(sm[i+1])
		}
		versioned = append(versioned, dir{base, v})
	}
	sort.SliceStable(versioned, func(i, j int) bool {
		a, b := versioned[i].ver, versioned[j].ver
		for k := range a {
			if a[k] != b[k] {
				return a[k] > b[k]
			}
		}
		return versioned[i].name < versioned[j].name
	})
	var out []string
	for _, d := range versioned {
		out = append(out, "/usr/local/"+d.name+"/bin")
	}
	if plain {
		out = append(out, "/usr/local/cuda/bin")
	}
	return out
}
