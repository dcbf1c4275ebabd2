package audit

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/internal/testenv"
)

// commands are what these tests run: audit, as the root adds it.
func commands(f *ghcmd.Factory, _ *specsource.Source) []*cobra.Command {
	return []*cobra.Command{NewCmdAudit(f.Factory, nil)}
}

// runCLI runs one command line in dir ("" for here) and returns the exit code and the output.
func runCLI(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	return cmdtest.Run(t, commands, dir, args...)
}

// TestAuditExitCodes: findings exit 1; a file that cannot be read or is not a workflow exits
// 2 (the audit is incomplete), after the other files were still audited.
func TestAuditExitCodes(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "seed.yml"), testenv.ReadFile(t, "testdata/seed_style.yml"))
	testenv.WriteFile(t, filepath.Join(dir, "broken.yml"), "on: [push\njobs:\n")
	testenv.WriteFile(t, filepath.Join(dir, "list.yml"), "- a\n- b\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yml"), 0o644); err != nil {
		t.Fatal(err)
	}
	clean := filepath.Join(cmdtest.RepoRoot(t), "examples", "debug_cuda_repro.yml")
	tests := []struct {
		name      string
		args      []string
		code      int
		want      []string
		wantLines int // lines of output, -1 to skip
	}{
		{"clean", []string{clean}, 0, []string{"1 file(s): no findings"}, 1},
		{"findings", []string{"seed.yml"}, 1, []string{"[expression-injection]", "finding(s)"}, -1},
		{"missing file", []string{"missing.yml"}, 2, []string{
			"debugflow: cannot audit missing.yml: no such file or directory",
			"debugflow: 1 of 1 file(s) could not be audited"}, 2},
		{"a folder", []string{"."}, 2, []string{"cannot audit .: it is a directory"}, -1},
		{"a fifo is not read", []string{"fifo.yml"}, 2, []string{"cannot audit fifo.yml: not a regular file (a FIFO)"}, -1},
		{"not YAML", []string{"broken.yml"}, 2, []string{"cannot audit broken.yml: parse YAML"}, -1},
		{"not a workflow", []string{"list.yml"}, 2, []string{"cannot audit list.yml: 1:1: a workflow must be a mapping"}, -1},
		{"the other files are still audited", []string{"missing.yml", "seed.yml", clean}, 2, []string{
			"cannot audit missing.yml", "seed.yml:21:22: [expression-injection]", "finding(s)",
			"1 of 3 file(s) could not be audited"}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runCLI(t, dir, append([]string{"audit"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d:\n%s", code, tt.code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if n := strings.Count(out, "\n"); tt.wantLines >= 0 && n != tt.wantLines {
				t.Errorf("%d lines of output, want %d:\n%s", n, tt.wantLines, out)
			}
		})
	}
}

// TestAuditFormats: --format json and sarif carry every finding with its severity and
// confidence, exit as text does, and print no summary line; a bad format exits 2.
func TestAuditFormats(t *testing.T) {
	clean := filepath.Join(cmdtest.RepoRoot(t), "examples", "debug_cuda_repro.yml")
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "seed.yml"), testenv.ReadFile(t, "testdata/seed_style.yml"))
	code, text := runCLI(t, dir, "audit", "seed.yml")
	if code != 1 {
		t.Fatalf("text: exit %d", code)
	}
	want := strings.Count(text, "\n") - 1 // the summary line

	code, out := runCLI(t, dir, "audit", "--format", "json", "seed.yml")
	var findings []struct {
		File, Rule, Severity, Confidence, Message string
		Line, Column                              int
	}
	if err := json.Unmarshal([]byte(out), &findings); err != nil || code != 1 {
		t.Fatalf("json: exit %d, %v:\n%s", code, err, out)
	}
	if len(findings) != want {
		t.Errorf("json has %d findings, text %d", len(findings), want)
	}
	for _, f := range findings {
		if f.File != "seed.yml" || f.Line < 1 || f.Rule == "" || !slices.Contains([]string{"high", "medium", "low"}, f.Severity) ||
			!slices.Contains([]string{"high", "medium", "low"}, f.Confidence) {
			t.Errorf("incomplete finding %+v", f)
		}
	}

	code, out = runCLI(t, dir, "audit", "--format", "sarif", "seed.yml")
	var log struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct{ Rules []struct{ ID string } }
			}
			Results []struct {
				RuleID    string
				RuleIndex int
				Level     string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine, StartColumn int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || code != 1 || log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("sarif: exit %d, %v:\n%s", code, err, out)
	}
	run := log.Runs[0]
	if len(run.Results) != want {
		t.Errorf("sarif has %d results, text %d", len(run.Results), want)
	}
	for _, r := range run.Results {
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID || !slices.Contains([]string{"error", "warning", "note"}, r.Level) ||
			r.Locations[0].PhysicalLocation.ArtifactLocation.URI != "seed.yml" || r.Locations[0].PhysicalLocation.Region.StartLine < 1 {
			t.Errorf("bad result %+v", r)
		}
	}

	if code, out := runCLI(t, dir, "audit", "--format", "json", clean); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("json of a clean file: exit %d: %q", code, out)
	}
	if code, out := runCLI(t, dir, "audit", "--format", "xml", "seed.yml"); code != 2 || !strings.Contains(out, "want one of text, json, sarif") {
		t.Errorf("bad format: exit %d:\n%s", code, out)
	}
}

// TestAuditConfigFile: the default config file is read from the working directory, --config
// names another; an unknown key or a bad file exits 2 before any audit.
func TestAuditConfigFile(t *testing.T) {
	dir := t.TempDir()
	wf := "on: pull_request\npermissions: {contents: write}\njobs:\n  j:\n    runs-on: big-box\n    timeout-minutes: 5\n    steps:\n      - run: echo\n"
	testenv.WriteFile(t, filepath.Join(dir, "w.yml"), wf)
	if code, out := runCLI(t, dir, "audit", "w.yml"); code != 1 || !strings.Contains(out, "[permissions]") || !strings.Contains(out, "[self-hosted-runner]") {
		t.Fatalf("without config: exit %d:\n%s", code, out)
	}
	testenv.WriteFile(t, filepath.Join(dir, ".github", "debugflow-audit.yml"), "allow-write: {contents: [w.yml]}\nhosted-labels: [big-box]\n")
	if code, out := runCLI(t, dir, "audit", "w.yml"); code != 0 {
		t.Errorf("with the default config: exit %d:\n%s", code, out)
	}
	testenv.WriteFile(t, filepath.Join(dir, "other.yml"), "self-hosted-labels: [ubuntu-latest]\n")
	if code, out := runCLI(t, dir, "audit", "--config", "other.yml", "w.yml"); code != 1 || !strings.Contains(out, "[self-hosted-runner]") {
		t.Errorf("--config other.yml (instead of the default one): exit %d:\n%s", code, out)
	}
	testenv.WriteFile(t, filepath.Join(dir, "typo.yml"), "allow_write: {contents: []}\n")
	if code, out := runCLI(t, dir, "audit", "--config", "typo.yml", "w.yml"); code != 2 || !strings.Contains(out, "config typo.yml") {
		t.Errorf("unknown key: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, dir, "audit", "--config", "missing.yml", "w.yml"); code != 2 || !strings.Contains(out, "config missing.yml") {
		t.Errorf("missing config: exit %d:\n%s", code, out)
	}
}

func TestAuditFindsEverySeedProblem(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "seed.yml"), testenv.ReadFile(t, "testdata/seed_style.yml"))
	code, out := runCLI(t, dir, "audit", "seed.yml")
	if code != 1 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"seed.yml:2:1: [permissions]",
		"seed.yml:13:3: [job-timeout]",
		"seed.yml:16:15: [pinned-actions]",
		"seed.yml:16:15: [checkout-credentials]",
		"seed.yml:21:22: [expression-injection]",
		"seed.yml:23:15: [pinned-actions]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("audit output lacks %q:\n%s", want, out)
		}
	}
	// reproduce_count is a number input: a number cannot carry code.
	if strings.Contains(out, "reproduce_count") {
		t.Errorf("the number input is reported:\n%s", out)
	}
}

// The release workflow's release job writes contents; the audit accepts exactly that with
// --allow-write contents, as ci.yml runs it.
func TestAuditAllowWrite(t *testing.T) {
	wf := filepath.Join(cmdtest.RepoRoot(t), ".github", "workflows", "release.yml")
	if code, out := runCLI(t, "", "audit", "--allow-write", "contents", wf); code != 0 || !strings.Contains(out, "no findings") {
		t.Errorf("audit --allow-write contents: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "", "audit", wf); code != 1 || !strings.Contains(out, `job "release" grants "contents" write access`) {
		t.Errorf("audit without --allow-write: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "", "audit", "--allow-write", "actions", wf); code != 1 {
		t.Errorf("audit --allow-write actions (another scope): exit %d:\n%s", code, out)
	}
}

// The repository's audit config (.github/debugflow-audit.yml) allows the release workflow's
// contents: write, so ci.yml audits it without flags; the allowance is for that file only.
func TestAuditConfigOfThisRepository(t *testing.T) {
	root := cmdtest.RepoRoot(t)
	if code, out := runCLI(t, root, "audit", ".github/workflows/ci.yml", ".github/workflows/release.yml"); code != 0 || !strings.Contains(out, "2 file(s): no findings") {
		t.Errorf("audit with the repository's config: exit %d:\n%s", code, out)
	}
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "other.yml"), testenv.ReadFile(t, filepath.Join(root, ".github", "workflows", "release.yml")))
	if code, out := runCLI(t, root, "audit", filepath.Join(dir, "other.yml")); code != 1 || !strings.Contains(out, `grants "contents" write`) {
		t.Errorf("another file with the same content: exit %d, want the write reported:\n%s", code, out)
	}
}
