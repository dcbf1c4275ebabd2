package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
)

// matrixDirs copies two golden cases into directories named like downloaded matrix artifacts.
func matrixDirs(t *testing.T) (t4, a10g string) {
	t.Helper()
	root := t.TempDir()
	t4 = copyCase(t, "t4_reproduced", filepath.Join(root, "debug_cuda_repro_artifacts-gpu-t4-4-core"))
	a10g = copyCase(t, "clean_run", filepath.Join(root, "debug_cuda_repro_artifacts-gpu-a10g-4-core"))
	return t4, a10g
}

// runCmd runs RunReport on a report command line and returns stdout, stderr and the error.
func runCmd(t *testing.T, opts *Options, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opts.Stdout, opts.Stderr = &stdout, &stderr
	if opts.IsTerminal == nil {
		opts.IsTerminal = func(io.Writer) bool { return false }
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	if err := parseArgs(opts, args); err != nil {
		return "", "", err
	}
	err := RunReport(context.Background(), opts)
	return stdout.String(), stderr.String(), err
}

// parseArgs reads a report command line into opts, without cobra: the flags are declared in
// cmd/internal/reportcmd, whose tests check the parsing, help and flag errors; the tests here
// write command lines for readability. It knows the flags of `debugflow report` and their
// defaults.
func parseArgs(opts *Options, args []string) error {
	opts.StripPrefix = "auto"
	opts.Confidence, opts.MinEffect = experiment.DefaultRule.Confidence, experiment.DefaultRule.MinEffect
	bools := map[string]*bool{"--compare": &opts.Compare, "--json": &opts.JSON, "--markdown": &opts.Markdown}
	strs := map[string]*string{"--artifact": &opts.Artifact, "--strip-prefix": &opts.StripPrefix, "--baseline": &opts.Baseline}
	floats := map[string]*float64{"--confidence": &opts.Confidence, "--min-effect": &opts.MinEffect}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if b, ok := bools[a]; ok {
			*b = true
			continue
		}
		if !strings.HasPrefix(a, "--") {
			opts.Dirs = append(opts.Dirs, a)
			continue
		}
		if i+1 >= len(args) {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s needs a value", a)}
		}
		v := args[i+1]
		i++
		if s, ok := strs[a]; ok {
			*s = v
		} else if f, ok := floats[a]; ok {
			if _, err := fmt.Sscan(v, f); err != nil {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s %q: %w", a, v, err)}
			}
		} else {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("unknown flag: %s", a)}
		}
	}
	if len(opts.Dirs) == 0 {
		return &ExitError{Code: ExitUsage, Err: errors.New("report requires at least 1 artifact directory (see --help)")}
	}
	return nil
}

func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return -1
}

func TestCompareGolden(t *testing.T) {
	t4, a10g := matrixDirs(t)
	for _, format := range []struct{ flag, golden string }{{"", "want.txt"}, {"--markdown", "want.md"}, {"--json", "want.json"}} {
		t.Run(format.golden, func(t *testing.T) {
			args := []string{"--compare", "--artifact", "debug_cuda_repro_artifacts", t4, a10g}
			if format.flag != "" {
				args = append(args, format.flag)
			}
			out, _, err := runCmd(t, &Options{}, args...)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "compare", format.golden), []byte(out))
		})
	}
}

func TestCompareJSONRows(t *testing.T) {
	t4, a10g := matrixDirs(t)
	out, _, err := runCmd(t, &Options{}, "--compare", "--json", t4, a10g)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"runner": "gpu-t4-4-core"`, `"runner": "gpu-a10g-4-core"`, `"reproducer": {`, `"sanitizer": {`, `"xid": {`} {
		if !strings.Contains(out, want) {
			t.Errorf("compare JSON lacks %s", want)
		}
	}
	if strings.Contains(out, `"error"`) {
		t.Errorf("readable runners carry an error key:\n%s", out)
	}
}

func TestCmdExitCodes(t *testing.T) {
	t4, a10g := matrixDirs(t)
	empty := t.TempDir()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    []string
		wantErrMsg string
	}{
		{"text", []string{t4}, ExitOK, []string{"Reproduced:     yes", "Directory:      " + t4}, ""},
		{"clean run still exits 0", []string{a10g}, ExitOK, []string{"Reproduced:     no"}, ""},
		{"json", []string{t4, "--json"}, ExitOK, []string{`"reproducer": {`}, ""},
		{"markdown with artifact", []string{t4, "--markdown", "--artifact", "my_artifacts"}, ExitOK, []string{"## Reproduced: yes", "`my_artifacts`"}, ""},
		{"no directory", []string{}, ExitUsage, nil, "requires at least 1"},
		{"two directories without --compare", []string{t4, a10g}, ExitUsage, nil, "use --compare"},
		{"empty directory", []string{empty}, ExitUnreadable, nil, "looked for reproducer.log"},
		{"missing directory", []string{filepath.Join(empty, "nope")}, ExitUnreadable, nil, "no such file"},
		{"compare with an unreadable runner", []string{"--compare", t4, empty}, ExitUnreadable,
			[]string{"gpu-t4-4-core", "unreadable"}, "no artifact files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runCmd(t, &Options{}, tt.args...)
			if code := exitCode(err); code != tt.wantCode {
				t.Fatalf("exit code %d (err %v), want %d", code, err, tt.wantCode)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if tt.wantErrMsg != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErrMsg)) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErrMsg)
			}
		})
	}
}

func TestCompareLabelsFromArtifactName(t *testing.T) {
	root := t.TempDir()
	t4 := copyCase(t, "t4_reproduced", filepath.Join(root, "my-artifacts-gpu-t4-4-core"))
	a10g := copyCase(t, "clean_run", filepath.Join(root, "my-artifacts-gpu-a10g-4-core"))
	out, _, err := runCmd(t, &Options{}, "--compare", "--markdown", "--artifact", "my-artifacts", t4, a10g)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| gpu-t4-4-core | yes |", "| gpu-a10g-4-core | no (rules out 5.8% or more: 50 runs each) |", "`my-artifacts-<runner>`"} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, out)
		}
	}
	// Without --artifact the automatic prefix stops at the first '-'.
	out, _, err = runCmd(t, &Options{}, "--compare", t4, a10g)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "artifacts-gpu-t4-4-core") {
		t.Errorf("text table:\n%s", out)
	}
}

func TestCmdColour(t *testing.T) {
	t4, _ := matrixDirs(t)
	tests := []struct {
		name     string
		terminal bool
		noColor  string
		want     bool
	}{
		{"terminal", true, "", true},
		{"terminal with NO_COLOR", true, "1", false},
		{"pipe", false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := &Options{
				IsTerminal: func(io.Writer) bool { return tt.terminal },
				Getenv: func(k string) string {
					if k == "NO_COLOR" {
						return tt.noColor
					}
					return ""
				},
			}
			out, _, err := runCmd(t, opts, t4)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(out, "\x1b["); got != tt.want {
				t.Errorf("colour %v, want %v:\n%q", got, tt.want, out)
			}
			if tt.want && !strings.Contains(out, ansiRed+"yes"+ansiReset) {
				t.Errorf("reproduced answer not in red:\n%q", out)
			}
		})
	}
}

func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for name, wr := range map[string]io.Writer{"pipe": w, "dev null": null, "buffer": &bytes.Buffer{}} {
		if isTerminal(wr) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}

func TestRunnerLabels(t *testing.T) {
	tests := []struct {
		name   string
		dirs   []string
		prefix string
		want   []string
	}{
		{"matrix artifacts", []string{"dl/debug_cuda_repro_artifacts-gpu-t4-4-core", "dl/debug_cuda_repro_artifacts-gpu-a10g-4-core/"},
			"auto", []string{"gpu-t4-4-core", "gpu-a10g-4-core"}},
		{"no common prefix", []string{"t4", "a10g"}, "auto", []string{"t4", "a10g"}},
		{"common prefix without a dash", []string{"run1", "run2"}, "auto", []string{"run1", "run2"}},
		{"one directory", []string{"x/debug_cuda_repro_artifacts-gpu-t4-4-core"}, "auto", []string{"debug_cuda_repro_artifacts-gpu-t4-4-core"}},
		{"explicit prefix", []string{"art-gpu-t4", "art-gpu-a10g"}, "art-gpu-", []string{"t4", "a10g"}},
		{"keep names", []string{"art-t4", "art-a10g"}, "", []string{"art-t4", "art-a10g"}},
		{"identical names keep their form", []string{"a/art-t4", "b/art-t4"}, "auto", []string{"t4", "t4"}},
		{"prefix equal to a name", []string{"art-", "art-x"}, "art-", []string{"art-", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RunnerLabels(tt.dirs, tt.prefix)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("RunnerLabels(%q, %q) = %q, want %q", tt.dirs, tt.prefix, got, tt.want)
			}
		})
	}
}
