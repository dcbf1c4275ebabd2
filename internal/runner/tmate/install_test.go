package tmate

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeRunner plays PATH and apt-get: tmate appears on PATH once an install
// succeeded.
type fakeRunner struct {
	onPath    map[string]string // program -> path
	failRuns  int               // how many install/update runs fail first
	failAll   bool
	ran       []string
	installed bool
}

func (f *fakeRunner) LookPath(file string) (string, error) {
	if p, ok := f.onPath[file]; ok {
		return p, nil
	}
	if file == "tmate" && f.installed {
		return "/usr/bin/tmate", nil
	}
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

func (f *fakeRunner) Run(_ context.Context, stdout, _ io.Writer, name string, args ...string) error {
	line := strings.Join(append([]string{name}, args...), " ")
	f.ran = append(f.ran, line)
	io.WriteString(stdout, "ran "+line+"\n")
	if f.failAll || f.failRuns > 0 {
		f.failRuns--
		return errors.New("exit status 100")
	}
	if strings.HasSuffix(line, "install -y tmate") {
		f.installed = true
	}
	return nil
}

func TestResolveTmate(t *testing.T) {
	tests := []struct {
		name     string
		root     bool
		runner   *fakeRunner
		wantPath string
		wantHow  string
		wantRan  []string
		wantErr  string
	}{
		{
			name:     "on PATH",
			runner:   &fakeRunner{onPath: map[string]string{"tmate": "/opt/bin/tmate"}},
			wantPath: "/opt/bin/tmate",
			wantHow:  "using /opt/bin/tmate (found on PATH)",
		},
		{
			name:     "root installs with apt-get",
			root:     true,
			runner:   &fakeRunner{},
			wantPath: "/usr/bin/tmate",
			wantHow:  "installed /usr/bin/tmate with apt-get install -y tmate",
			wantRan:  []string{"apt-get install -y tmate"},
		},
		{
			name:     "non-root installs through sudo -n",
			runner:   &fakeRunner{onPath: map[string]string{"sudo": "/usr/bin/sudo"}},
			wantPath: "/usr/bin/tmate",
			wantHow:  "installed /usr/bin/tmate with sudo -n apt-get install -y tmate",
			wantRan:  []string{"sudo -n apt-get install -y tmate"},
		},
		{
			name:     "stale package lists: update and retry",
			runner:   &fakeRunner{onPath: map[string]string{"sudo": "/usr/bin/sudo"}, failRuns: 1},
			wantPath: "/usr/bin/tmate",
			wantHow:  "installed /usr/bin/tmate with sudo -n apt-get install -y tmate",
			wantRan:  []string{"sudo -n apt-get install -y tmate", "sudo -n apt-get update", "sudo -n apt-get install -y tmate"},
		},
		{
			name:    "install fails",
			root:    true,
			runner:  &fakeRunner{failAll: true},
			wantRan: []string{"apt-get install -y tmate", "apt-get update"},
			wantErr: "tmate is not on PATH and apt-get update failed",
		},
		{
			name:    "no root, no sudo",
			runner:  &fakeRunner{},
			wantErr: "not running as root and sudo is not available",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := geteuid
			geteuid = func() int {
				if tc.root {
					return 0
				}
				return 1000
			}
			defer func() { geteuid = old }()
			var log bytes.Buffer
			path, how, err := resolveTmate(context.Background(), tc.runner, "", &log)
			if diff := cmp.Diff(tc.wantRan, tc.runner.ran); diff != "" {
				t.Errorf("commands run (-want +got):\n%s", diff)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || path != tc.wantPath || how != tc.wantHow {
				t.Fatalf("resolveTmate = %q, %q, %v; want %q, %q", path, how, err, tc.wantPath, tc.wantHow)
			}
			if len(tc.wantRan) > 0 && !strings.Contains(log.String(), "tmate is not on PATH: running "+tc.wantRan[0]) {
				t.Errorf("install not announced:\n%s", log.String())
			}
		})
	}
}

func TestResolveTmateConfiguredPath(t *testing.T) {
	r := &fakeRunner{}
	path, how, err := resolveTmate(context.Background(), r, tmateDouble(), io.Discard)
	if err != nil || path != tmateDouble() || !strings.Contains(how, "configured") {
		t.Fatalf("resolveTmate = %q, %q, %v", path, how, err)
	}
	if len(r.ran) != 0 {
		t.Errorf("ran %q for a configured path", r.ran)
	}
	if _, _, err := resolveTmate(context.Background(), r, filepath.Join(t.TempDir(), "missing"), io.Discard); err == nil {
		t.Error("a missing configured tmate was accepted")
	}
}

// hangingInstaller has no tmate on PATH and an apt-get that never finishes.
type hangingInstaller struct{}

func (hangingInstaller) LookPath(file string) (string, error) {
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

func (hangingInstaller) Run(ctx context.Context, _, _ io.Writer, _ string, _ ...string) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestGateInstallCountsAgainstTimeout checks that a hanging apt-get cannot
// hold the job past the gate's timeout.
func TestGateInstallCountsAgainstTimeout(t *testing.T) {
	old := geteuid
	geteuid = func() int { return 0 }
	defer func() { geteuid = old }()
	h := newHarness(t)
	o := h.options()
	o.TmatePath, o.Runner = "", hangingInstaller{}
	o.TimeoutMinutes = "3" // 300 ms
	r := h.wait(h.start(context.Background(), o))
	if r.err == nil || !strings.Contains(r.err.Error(), "the 3-minute timeout elapsed while installing tmate") {
		t.Fatalf("err = %v", r.err)
	}
	if r.elapsed > 300*time.Millisecond+2*time.Second {
		t.Errorf("gate took %v with a 300 ms timeout", r.elapsed)
	}
}
