package download

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd/ghcmdtest"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

func TestDownloadCommand(t *testing.T) {
	srv := ghcmdtest.NewServer(t)
	id := srv.AddRun(ghcmdtest.FinishedRun(ghcmdtest.WorkflowFile, "debug/t4"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-t4", Zip: ghcmdtest.EvidenceZip(t, 5)})
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-a10g", Zip: ghcmdtest.MakeZip(t, ghcmdtest.ZipEntry{Name: "system_identity.txt", Body: "A10G"})})
	h := ghcmdtest.NewHarness(t, srv)
	dir := t.TempDir()
	err := h.Run(downloadCmd, "--latest", "-D", dir)
	// One report fails (no reproducer summary in the a10g artifact), the other still prints.
	if ghrun.ExitCode(err) != ghrun.ExitFailure || !strings.Contains(fmt.Sprint(err), "evidence-a10g") {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"== " + filepath.Join(dir, "evidence-a10g") + " ==", "== " + filepath.Join(dir, "evidence-t4") + " ==",
		"verdict for evidence-t4: reproduced=true failed=5"} {
		if !strings.Contains(h.Out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, h.Out.String())
		}
	}
	if !strings.Contains(h.Err.String(), "latest run of "+ghcmdtest.WorkflowFile+": "+ghcmdtest.Itoa64(id)) {
		t.Errorf("stderr:\n%s", h.Err.String())
	}

	for _, args := range [][]string{{"1", "--max-size", "lots"}, {"1", "--max-files", "0"}, {}} {
		h := ghcmdtest.NewHarness(t, srv)
		if err := h.Run(downloadCmd, args...); ghrun.ExitCode(err) != ghrun.ExitUsage {
			t.Errorf("download %q: err = %v, want a usage error", args, err)
		}
	}
}

func TestDownloadSelection(t *testing.T) {
	names := []string{"evidence-a10g", "evidence-t4", "evidence-t4-old", "logs"}
	tests := []struct {
		name     string
		args     []string
		want     []string // folders under DIR, or "." for DIR itself
		wantErr  string
		noDIRArg bool
	}{
		{name: "everything that has not expired", want: []string{"evidence-a10g", "evidence-t4", "logs"}},
		{name: "one -n goes into DIR", args: []string{"-n", "logs"}, want: []string{"."}},
		{name: "two -n", args: []string{"-n", "logs", "-n", "evidence-t4"}, want: []string{"evidence-t4", "logs"}},
		{name: "a pattern, even matching one, isolates", args: []string{"-p", "log*"}, want: []string{"logs"}},
		{name: "patterns skip expired matches", args: []string{"-p", "evidence-t4*"}, want: []string{"evidence-t4"}},
		{name: "names and patterns together", args: []string{"-n", "logs", "-p", "*a10g"}, want: []string{"evidence-a10g", "logs"}},
		{name: "unknown name", args: []string{"-n", "nope"}, wantErr: `has no artifact "nope"; it has: evidence-a10g, evidence-t4, evidence-t4-old, logs`},
		{name: "expired by name", args: []string{"-n", "evidence-t4-old"}, wantErr: "has expired"},
		{name: "pattern matching nothing", args: []string{"-p", "x*", "-p", "y*"}, wantErr: `matches -p "x*" -p "y*"; it has:`},
		{name: "bad pattern is refused before any request", args: []string{"-p", "[a-"}, wantErr: `-p "[a-" is not a glob pattern`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := ghcmdtest.NewServer(t)
			id := srv.AddRun(ghcmdtest.FinishedRun(ghcmdtest.WorkflowFile, "main"))
			for _, n := range names {
				srv.AddArtifact(id, ghtest.ArtifactFile{Name: n, Zip: ghcmdtest.EvidenceZip(t, 1), Expired: strings.HasSuffix(n, "-old")})
			}
			h := ghcmdtest.NewHarness(t, srv)
			dir := filepath.Join(t.TempDir(), "out")
			err := h.Run(downloadCmd, append([]string{ghcmdtest.Itoa64(id), "-D", dir}, tt.args...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(tt.name, "before any request") && len(srv.Requests()) != 0 {
					t.Errorf("%d requests", len(srv.Requests()))
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, h.Err.String())
			}
			var got []string
			if _, err := os.Stat(filepath.Join(dir, "reproducer_summary.json")); err == nil {
				got = []string{"."}
			} else {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					got = append(got, e.Name())
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("extracted %v, want %v", got, tt.want)
			}
		})
	}
}

// Without -D, the folder is debugflow-run-<RUN_ID> in the current folder, and the output says so.
func TestDownloadDefaultFolder(t *testing.T) {
	srv := ghcmdtest.NewServer(t)
	id := srv.AddRun(ghcmdtest.FinishedRun(ghcmdtest.WorkflowFile, "main"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: ghcmdtest.EvidenceZip(t, 1)})
	h := ghcmdtest.NewHarness(t, srv)
	t.Chdir(t.TempDir())
	if err := h.Run(downloadCmd, ghcmdtest.Itoa64(id)); err != nil {
		t.Fatal(err)
	}
	want := "debugflow-run-" + ghcmdtest.Itoa64(id)
	if _, err := os.Stat(filepath.Join(want, "reproducer_summary.json")); err != nil {
		t.Errorf("not extracted into ./%s: %v", want, err)
	}
	if !strings.Contains(h.Err.String(), "downloading into "+want+" (the default for run "+ghcmdtest.Itoa64(id)+"; choose another folder with -D)") {
		t.Errorf("stderr does not name the folder:\n%s", h.Err.String())
	}
}

// TestDownloadShowsArtifactNamesVisibly: an artifact's name comes from the workflow (a matrix
// value) and the server; the progress lines, the folder names and the report headings show it
// with its control characters escaped.
func TestDownloadShowsArtifactNamesVisibly(t *testing.T) {
	const evil = "\x1b]0;PWNED\a\x1b[2J\u202e"
	for _, tty := range []bool{false, true} {
		srv := ghcmdtest.NewServer(t)
		srv.HTMLBase = "https://github.com/" + evil
		id := srv.AddRun(ghcmdtest.FinishedRun(ghcmdtest.WorkflowFile, "debug/t4"))
		srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence" + evil, Zip: ghcmdtest.EvidenceZip(t, 5)})
		srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-a10g", Zip: ghcmdtest.EvidenceZip(t, 1)})
		h := ghcmdtest.NewHarness(t, srv)
		h.F.IO.IsTTY = tty
		h.F.Report = func(dir string, w io.Writer) error { _, err := io.WriteString(w, "verdict\n"); return err }
		if err := h.Run(downloadCmd, "--latest", "-D", t.TempDir()); err != nil {
			t.Fatal(err)
		}
		own := regexp.MustCompile(`\r\x1b\[K`)
		for name, s := range map[string]string{"stdout": h.Out.String(), "stderr": h.Err.String()} {
			got := own.ReplaceAllString(s, "")
			if strings.ContainsAny(got, "\x1b\a\u202e") {
				t.Errorf("tty=%v: %s holds raw control characters:\n%q", tty, name, got)
			}
		}
		if !strings.Contains(h.Out.String(), `evidence\x1b]0;PWNED\x07`) {
			t.Errorf("tty=%v: the folder heading does not show the name escaped:\n%s", tty, h.Out.String())
		}
	}
}
