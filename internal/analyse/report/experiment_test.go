package report

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An experiment from two plain debug runs of the same suite: the T4 run that reproduced is
// the baseline, the clean run the candidate. --baseline names a folder (added to the list
// when not given again) or a ref name.
func TestCompareBaseline(t *testing.T) {
	root := t.TempDir()
	before := copyCase(t, "t4_reproduced", filepath.Join(root, "before"))
	after := copyCase(t, "clean_run", filepath.Join(root, "after"))

	out, stderr, err := runCmd(t, &Options{}, "--compare", "--baseline", before, after)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"Baseline:  before", "REF", "P-VALUE", "before  -", "after   -"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}

	out, _, err = runCmd(t, &Options{}, "--baseline", "before", "--json", before, after)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Baseline string `json:"baseline"`
		Rows     []struct {
			Ref      string   `json:"ref"`
			Trials   int      `json:"trials"`
			Failures int      `json:"failures"`
			Verdict  string   `json:"verdict"`
			PValue   *float64 `json:"p_value"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Baseline != "before" || len(got.Rows) != 2 || got.Rows[0].Verdict != "baseline" || got.Rows[1].PValue == nil {
		t.Fatalf("json %+v", got)
	}
	if b := got.Rows[0]; b.Failures == 0 || b.Trials < b.Failures {
		t.Errorf("baseline row %+v: the reproduced run has failures", b)
	}

	md, _, err := runCmd(t, &Options{}, "--compare", "--baseline", before, "--markdown", before, after)
	if err != nil || !strings.Contains(md, "```mermaid\ngantt") {
		t.Errorf("markdown: %v\n%s", err, md)
	}
}

func TestCompareBaselineErrors(t *testing.T) {
	root := t.TempDir()
	before := copyCase(t, "t4_reproduced", filepath.Join(root, "before"))
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown baseline name", []string{"--baseline", "nope", before}, ExitUnreadable, `baseline "nope"`},
		{"unreadable folder", []string{"--baseline", before, filepath.Join(root, "missing")}, ExitUnreadable, "no such folder"},
		{"bad confidence", []string{"--baseline", before, "--confidence", "1.5", before}, ExitUsage, "confidence"},
		{"bad effect", []string{"--baseline", before, "--min-effect", "2", before}, ExitUsage, "odds ratio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runCmd(t, &Options{}, tt.args...)
			if exitCode(err) != tt.code || !strings.Contains(err.Error()+stderr, tt.want) {
				t.Errorf("exit %d (%v), stderr %q; want %d and %q", exitCode(err), err, stderr, tt.code, tt.want)
			}
		})
	}
}

// --compare --baseline reads the folders by the report's rules: a test id cannot drive the
// terminal, and a cancelled context exits 130.
func TestCompareBaselineHostile(t *testing.T) {
	root := t.TempDir()
	before := copyCase(t, "t4_reproduced", filepath.Join(root, "before"))
	after := copyCase(t, "clean_run", filepath.Join(root, "after"))
	for _, dir := range []string{before, after} {
		log := filepath.Join(dir, ReproducerLog)
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(log, []byte(strings.ReplaceAll(string(b), "test_ad_fibonacci", "test_ad_\u202efib\u009bonacci\a")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, format := range []string{"", "--markdown", "--json"} {
		args := []string{"--compare", "--baseline", before, after}
		if format != "" {
			args = append(args, format)
		}
		out, _, err := runCmd(t, &Options{}, args...)
		if err != nil {
			t.Fatal(err)
		}
		if bad := terminalActive(out); bad != "" {
			t.Errorf("%q output carries %q:\n%s", format, bad, out)
		}
		if format != "--json" && !strings.Contains(out, `test_ad_\u202efib\u009bonacci\x07`) {
			t.Errorf("%q output does not show the test id visibly:\n%s", format, out)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := RunReport(ctx, &Options{Dirs: []string{before, after}, Compare: true, Baseline: before, Stdout: &out, Stderr: io.Discard})
	if exitCode(err) != ExitInterrupted || out.Len() != 0 {
		t.Errorf("cancelled: exit %d (%v), output %q", exitCode(err), err, out.String())
	}
}

// TestCompareBaselineFolderCountsOnce: --baseline names the folder by its absolute path while
// the list has it relative (or the other way round): it is in the list, and counts once. A
// folder given twice in the list is an error, not doubled trials.
func TestCompareBaselineFolderCountsOnce(t *testing.T) {
	root := t.TempDir()
	copyCase(t, "t4_reproduced", filepath.Join(root, "before"))
	copyCase(t, "clean_run", filepath.Join(root, "after"))
	t.Chdir(root)
	abs := filepath.Join(root, "before")
	out, stderr, err := runCmd(t, &Options{}, "--compare", "--baseline", abs, "--json", "./before/", "after")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	once, _, err := runCmd(t, &Options{}, "--compare", "--baseline", "before", "--json", "before", "after")
	if err != nil {
		t.Fatal(err)
	}
	if out != once {
		t.Errorf("the baseline given by its absolute path:\n%s\nwant as given once:\n%s", out, once)
	}
	_, stderr, err = runCmd(t, &Options{}, "--compare", "--baseline", "before", "before", "after", "after/")
	if exitCode(err) != ExitUnreadable || !strings.Contains(err.Error()+stderr, "after and after/ are the same folder: each folder counts once") {
		t.Errorf("a folder given twice: exit %d (%v) %s", exitCode(err), err, stderr)
	}
}
