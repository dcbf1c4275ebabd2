package steps

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/runner/jobmark"
	"github.com/debugflow/debugflow/internal/testenv"
)

func TestInitMakesTheJobsFolderAndLink(t *testing.T) {
	t.Parallel()
	root, tmp := t.TempDir(), t.TempDir()
	ghEnv := filepath.Join(tmp, "github_env")
	writeFile(t, ghEnv, "")
	link := filepath.Join(tmp, "repro")
	// An earlier job's link: replaced.
	if err := os.Symlink(filepath.Join(tmp, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	te := newTestEnv(t, map[string]string{"GITHUB_ENV": ghEnv, "GITHUB_RUN_ID": "77", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_JOB": "debug"})
	dir, err := RunInit(te.Env, InitOptions{Root: root, Link: link})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != root || !strings.HasPrefix(filepath.Base(dir), "debugflow-77-1-debug-") {
		t.Errorf("folder %s, want debugflow-77-1-debug-* under %s", dir, root)
	}
	if m, err := jobmark.Load(dir); err != nil || m.RunID != "77" {
		t.Errorf("marker %+v, %v", m, err)
	}
	if got, err := filepath.EvalSymlinks(link); err != nil || got != dir {
		t.Errorf("%s -> %q (%v), want %s", link, got, err, dir)
	}
	if env := readFile(t, ghEnv); !strings.Contains(env, EvidenceEnv+"<<") || !strings.Contains(env, "\n"+dir+"\n") {
		t.Errorf("$GITHUB_ENV = %q, want %s=%s", env, EvidenceEnv, dir)
	}
}

// A real folder at the link's path may be another job's (a workflow generated before the
// evidence folder, on the same host): it is left alone, and the job still gets its own.
func TestInitLeavesAnotherJobsFolderAlone(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	shared := filepath.Join(tmp, "repro")
	writeFile(t, filepath.Join(shared, "sanitizer.log"), "another job's")
	te := newTestEnv(t, nil)
	dir, err := RunInit(te.Env, InitOptions{Root: filepath.Join(tmp, "temp"), Link: shared})
	if err != nil {
		t.Fatal(err)
	}
	if readFile(t, filepath.Join(shared, "sanitizer.log")) != "another job's" {
		t.Error("the other job's file changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "sanitizer.log")); err == nil {
		t.Error("the other job's file is in this job's folder")
	}
	if !strings.Contains(te.stderr.String()+te.stdout.String(), "is not a link") {
		t.Errorf("no warning that the link was not made:\n%s%s", te.stdout, te.stderr)
	}
	if out := terminalOutputs(te.stdout.String()); out["dir"] != dir {
		t.Errorf("output dir = %q, want %s", out["dir"], dir)
	}
}

func TestInitNeedsOneOfRootAndOut(t *testing.T) {
	t.Parallel()
	for _, o := range []InitOptions{{}, {Root: "/a", Out: "/b"}, {Root: "relative"}} {
		if _, err := RunInit(newTestEnv(t, nil).Env, o); ExitCodeFor(err) != ExitUsage {
			t.Errorf("%+v: %v, want a usage error", o, err)
		}
	}
}

// TestJobStepsTwiceInOneFolder runs a job's steps twice in one evidence folder, as a
// self-hosted runner that keeps /tmp runs one job after another: a job that reproduces (its
// sanitizer runs), then one that passes. The second job's summary and verdict say nothing of
// the first: init emptied the folder. Then a file of an earlier job that appears in the
// folder anyway (older than the marker) is set aside by summary and verdict and named.
func TestJobStepsTwiceInOneFolder(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	w := newE2EWorld(t, "crash", "FAKE_SANITIZER_MODE=access-at")
	job := func(run string, args ...string) (summary string, verdict stepRun) {
		env := append(w.env, "GITHUB_RUN_ID="+run, "GITHUB_JOB=debug")
		if r := runStep(t, w.suite, env, "init", "--out", w.out); r.code != 0 {
			t.Fatalf("init exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r := runStep(t, w.suite, env, append([]string{"reproduce", "--out", w.out, "--python", py, "--workers", "2", "--count", "5"}, args...)...)
		if r.code != 0 {
			t.Fatalf("reproduce exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		// The workflow runs the sanitizer only when the reproducer reproduced.
		if loadSummary(t, w.out).Reproduced {
			if r := runStep(t, w.suite, env, "sanitize", "--out", w.out, "--python", py); r.code != 0 {
				t.Fatalf("sanitize exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		}
		if r := runStep(t, w.suite, env, "summary", "--out", w.out); r.code != 0 {
			t.Fatalf("summary exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		return readFile(t, filepath.Join(w.out, SummaryMarkdown)), runStep(t, w.suite, env, "verdict", "--out", w.out)
	}
	first, v1 := job("101", "test_repro.py")
	if v1.code != 1 || !strings.Contains(first, "memcheck") || !strings.Contains(first, "Crashed") {
		t.Fatalf("the first job did not reproduce with a sanitizer finding (verdict %d):\n%s", v1.code, first)
	}
	second, v2 := job("102", "test_repro.py", "-k", "cpu")
	if v2.code != 0 || !strings.Contains(v2.stdout, "bug not reproduced") {
		t.Errorf("second verdict exit %d: %s", v2.code, v2.stdout)
	}
	for _, stale := range []string{"memcheck", "ERROR SUMMARY", "Crashed", "Xid 31", "test_x[cuda", "1 failed", "2 failed"} {
		if strings.Contains(second, stale) || strings.Contains(v2.stdout, stale) {
			t.Errorf("the second job's summary or verdict mentions %q of the first:\n%s\n%s", stale, second, v2.stdout)
		}
	}
	for _, name := range []string{SanitizerLog, SanitizerSummaryJSON, jobmark.LeftoverDir} {
		if _, err := os.Stat(filepath.Join(w.out, name)); err == nil {
			t.Errorf("%s of the first job is in the second's folder", name)
		}
	}

	// A file the second job did not write turns up (another writer, a failed clean-up).
	stale := filepath.Join(w.out, SanitizerLog)
	writeFile(t, stale, "========= ERROR SUMMARY: 2 errors\n")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	env := append(w.env, "GITHUB_RUN_ID=102", "GITHUB_JOB=debug")
	if r := runStep(t, w.suite, env, "summary", "--out", w.out); r.code != 0 {
		t.Fatalf("summary exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	md := readFile(t, filepath.Join(w.out, SummaryMarkdown))
	if strings.Contains(md, "memcheck") || strings.Contains(md, "ERROR SUMMARY") ||
		!strings.Contains(md, "were not written by run 102, job debug (left by an earlier job)") || !strings.Contains(md, SanitizerLog) {
		t.Errorf("the summary read or did not name the leftover %s:\n%s", SanitizerLog, md)
	}
	var m jobmark.Marker
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(w.out, jobmark.File))), &m); err != nil || m.LeftoverCount != 1 {
		t.Errorf("job.json %+v (%v), want the leftover recorded", m, err)
	}
	if _, err := os.Stat(filepath.Join(w.out, jobmark.LeftoverDir, SanitizerLog)); err != nil {
		t.Errorf("the leftover was not set aside: %v", err)
	}
}

// TestInitOutRefusesAFolderThatIsNotEvidence: init --out empties its folder, so a folder
// that holds files and no job.json of an earlier init (a home folder, a checkout: `--out ~`,
// `--out .`) is refused with exit 2 and left as it is; a new, empty or earlier evidence
// folder (the re-run in one folder) is still made the job's.
func TestInitOutRefusesAFolderThatIsNotEvidence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		// dot runs init in the folder with --out .
		dot    bool
		refuse bool
	}{
		{name: "a checkout", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
			writeFile(t, filepath.Join(dir, "main.go"), "package main\n")
		}, refuse: true},
		{name: "a checkout as .", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "main.go"), "package main\n")
		}, dot: true, refuse: true},
		{name: "only a hidden file", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".bashrc"), "export A=1\n")
		}, refuse: true},
		{name: "a job.json that is not init's", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, jobmark.File), `{"name":"build"}`)
			writeFile(t, filepath.Join(dir, "notes.txt"), "mine\n")
		}, refuse: true},
		{name: "a folder named job.json", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, jobmark.File, "x"), "mine\n")
		}, refuse: true},
		{name: "missing", setup: func(t *testing.T, dir string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "empty", setup: func(t *testing.T, dir string) {}},
		{name: "empty as .", setup: func(t *testing.T, dir string) {}, dot: true},
		{name: "an earlier job's evidence", setup: func(t *testing.T, dir string) {
			if err := jobmark.Write(dir, jobmark.FromEnv(func(string) string { return "" }, time.Now())); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, SanitizerLog), "========= ERROR SUMMARY: 2 errors\n")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			dir := filepath.Join(parent, "folder")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			c.setup(t, dir)
			before := treeOf(t, dir)
			cwd, out := parent, dir
			if c.dot {
				cwd, out = dir, "."
			}
			r := runStep(t, cwd, []string{"PATH=" + os.Getenv("PATH"), "GITHUB_RUN_ID=9"}, "init", "--out", out)
			if c.refuse {
				if r.code != ExitUsage {
					t.Fatalf("exit %d, want %d (refused)\n%s%s", r.code, ExitUsage, r.stdout, r.stderr)
				}
				for _, want := range []string{dir, "not a debugflow evidence folder", "--root"} {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
					}
				}
				if after := treeOf(t, dir); after != before {
					t.Errorf("the folder changed:\nbefore %s\nafter  %s", before, after)
				}
				return
			}
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if m, err := jobmark.Load(dir); err != nil || m.RunID != "9" {
				t.Errorf("marker %+v, %v; want run 9's", m, err)
			}
			// The folder is handed on absolute: a later step may run elsewhere.
			if !strings.Contains(r.stdout, "goes to "+dir+"\n") {
				t.Errorf("init did not hand on %s:\n%s", dir, r.stdout)
			}
			if tree := treeOf(t, dir); tree != jobmark.File {
				t.Errorf("folder holds %s, want only %s", tree, jobmark.File)
			}
		})
	}
}

// treeOf lists every path under dir (relative, sorted, space-separated).
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return "(missing)"
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir {
			rel, _ := filepath.Rel(dir, path)
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, " ")
}
