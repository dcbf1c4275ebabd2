package steps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

// check-sanitizer prints the CUDA release of compute-sanitizer beside the CUDA libraries' and
// warns when they differ (the distribution's nvidia-cuda-toolkit beside CUDA 12.8 libraries).
func TestCheckSanitizerComparesCUDAReleases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		inCUDA bool   // the sanitizer is the one of /usr/local/cuda-12.8
		dpkg   string // what dpkg-query says of nvidia-cuda-toolkit ("": not installed)
		want   string
		warn   bool
	}{
		{"distribution toolkit beside 12.8", false, "12.0.146~12.0.1-4", "compute-sanitizer of CUDA 12.0 (nvidia-cuda-toolkit 12.0.146~12.0.1-4), CUDA libraries 12.8", true},
		{"the sanitizer of the libraries", true, "", "compute-sanitizer of CUDA 12.8 (in cuda-12.8), CUDA libraries 12.8", false},
		{"unknown", false, "", "CUDA of compute-sanitizer unknown, of the CUDA libraries 12.8", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cudaBin := filepath.Join(root, "usr", "local", "cuda-12.8", "bin")
			if err := os.MkdirAll(cudaBin, 0o755); err != nil {
				t.Fatal(err)
			}
			path := binDir(t, "compute-sanitizer")
			if tc.inCUDA {
				path = cudaBin
				b, _ := os.ReadFile(built(t, "compute-sanitizer"))
				testenv.WriteExecutable(t, filepath.Join(cudaBin, "compute-sanitizer"), b)
			}
			if tc.dpkg != "" {
				script := "#!/bin/sh\nprintf '%s' '" + tc.dpkg + "'\n"
				testenv.WriteExecutable(t, filepath.Join(path, "dpkg-query"), []byte(script))
			}
			te := newTestEnv(t, map[string]string{"PATH": path})
			te.Root = root
			if err := RunCheckSanitizer(context.Background(), te.Env, CheckSanitizerOptions{}); err != nil {
				t.Fatal(err)
			}
			out := te.stdout.String()
			if !strings.Contains(out, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
			if warned := strings.Contains(out, "::warning") && strings.Contains(out, "install the sanitizer of the same release (cuda-sanitizer-12-8)"); warned != tc.warn {
				t.Errorf("warned %v, want %v:\n%s", warned, tc.warn, out)
			}
		})
	}
}
