package steps

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/testenv"
)

// checkWorkerRecord checks the workers.jsonl of the crash suite's reproducer run (pytest -n 2
// --count 5, repetition 3 of test_x[cuda] writes an Xid with its own pid and aborts its
// worker): every pytest process is there with its real pid, every test a worker finished has
// a start and a finish, the crashed worker's last test has no finish, xdist's replacement
// worker is found, and the Xid's pid names the crashed worker and its test.
func checkWorkerRecord(t *testing.T, w *e2eWorld, sum *ReproducerResult) {
	t.Helper()
	f, err := os.Open(filepath.Join(w.out, WorkerLog))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := workerlog.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if log.Invalid != 0 || log.Truncated || log.TZOffset == nil {
		t.Errorf("record: %d invalid lines, truncated %v, tz offset %v", log.Invalid, log.Truncated, log.TZOffset)
	}
	var names []string
	tests := 0
	for _, wk := range log.Workers {
		names = append(names, wk.Name)
		if wk.PID <= 0 || wk.First <= 0 {
			t.Errorf("worker %+v has no pid or time", wk)
		}
		tests += len(wk.Tests)
	}
	// The controller, gw0, gw1, and gw2 that replaced the crashed worker.
	slices.Sort(names)
	if !slices.Equal(names, []string{"controller", "gw0", "gw1", "gw2"}) {
		t.Errorf("workers in the record = %q", names)
	}
	if tests != 15 {
		t.Errorf("%d test starts in the record, want the 15 tests (the crashed one included)", tests)
	}
	if len(sum.Crashes) != 1 {
		t.Fatalf("crashes = %+v, want one", sum.Crashes)
	}
	crashed := sum.Crashes[0]
	cw := log.ByName(crashed.Worker)
	if cw == nil {
		t.Fatalf("the crashed worker %s is not in the record", crashed.Worker)
	}
	last := cw.Tests[len(cw.Tests)-1]
	if last.NodeID != crashed.NodeID || last.Finished {
		t.Errorf("the crashed worker's last test = %+v, want %s unfinished", last, crashed.NodeID)
	}
	for _, wk := range log.Workers {
		for _, tr := range wk.Tests {
			if !tr.Finished && tr.NodeID != crashed.NodeID {
				t.Errorf("%s: %s started but never finished", wk.Name, tr.NodeID)
			}
		}
	}
	cs := log.Crashes([][2]string{{crashed.Worker, crashed.NodeID}}, 2)
	if cs[0].ReplacedBy != "gw2" || cs[0].Position < 1 || cs[0].PID != cw.PID {
		t.Errorf("crash placed as %+v", cs[0])
	}
	// The pid the suite wrote into its Xid line is the crashed worker's, as recorded.
	m := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(readFile(t, w.kmsg))
	if m == nil {
		t.Fatal("no Xid pid in the kernel log")
	}
	pid, _ := strconv.Atoi(m[1])
	a := log.Attribute(pid, "Wed Dec  2 10:47:01 2026", map[string]string{crashed.Worker: crashed.NodeID})
	if a.Worker != crashed.Worker || a.Test != crashed.NodeID || a.By != workerlog.ByCrash {
		t.Errorf("Xid pid %d attributed to %+v, want %s running %s", pid, a, crashed.Worker, crashed.NodeID)
	}
}

// TestWorkerRecordWithoutXdist runs pytest without workers (-n 0): the one process is "main",
// and an --env PYTHONPATH of the project stays importable next to the plugin's folder.
func TestWorkerRecordWithoutXdist(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	w := newE2EWorld(t, "crash")
	lib := t.TempDir()
	writeFile(t, filepath.Join(lib, "projectlib.py"), "VALUE = 42\n")
	writeFile(t, filepath.Join(w.suite, "test_lib.py"), "import projectlib\n\ndef test_lib():\n    assert projectlib.VALUE == 42\n")
	r := runStep(t, w.suite, w.env, "reproduce", "--out", w.out, "--python", py, "--workers", "0", "--count", "1",
		"--env", "PYTHONPATH="+lib, "test_lib.py")
	if r.code != 0 || !strings.Contains(r.stdout, "1 passed") {
		t.Fatalf("reproduce exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	f, err := os.Open(filepath.Join(w.out, WorkerLog))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := workerlog.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Workers) != 1 || log.Workers[0].Name != workerlog.Main || len(log.Workers[0].Tests) != 1 || !log.Workers[0].Tests[0].Finished {
		t.Errorf("record without xdist: %+v", log.Workers)
	}
}

// TestStoppedRunKeepsTheFirstError stops a real pytest -n 2 at its first failure, whose
// message is wider than pytest's 80 columns: pytest never prints its report (SIGTERM), so the
// worker record carries the message, and the verdict shows it whole.
func TestStoppedRunKeepsTheFirstError(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	w := newE2EWorld(t, "crash")
	const message = "AssertionError: ndarray gradient mismatch at index 17: expected 0.5 but the kernel wrote -1.0e+38 (an out-of-bounds write of the reducer)"
	writeFile(t, filepath.Join(w.suite, "test_grad.py"), `import time
import pytest


@pytest.mark.parametrize("dev", ["cpu", "cuda"])
def test_grad(dev, request):
    if dev == "cuda" and request.node.name.endswith("-2-3]"):
        assert False, "`+strings.TrimPrefix(message, "AssertionError: ")+`"


def test_slow():
    time.sleep(30)
`)
	r := runStep(t, w.suite, w.env, "reproduce", "--out", w.out, "--python", py, "--workers", "2", "--count", "3",
		"--stop-on-first-failure", "--grace", "2s", "test_grad.py")
	if r.code != 0 {
		t.Fatalf("reproduce exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if sum := loadSummary(t, w.out); !sum.StoppedEarly || sum.Complete {
		t.Fatalf("the run was not stopped early: %+v", sum)
	}
	if log := readFile(t, filepath.Join(w.out, ReproducerLog)); strings.Contains(log, "short test summary") {
		t.Fatalf("pytest printed its summary: the test does not cover a stopped run:\n%s", log)
	}
	f, err := os.Open(filepath.Join(w.out, WorkerLog))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := workerlog.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if ff := log.FirstFailure; ff == nil || ff.Message != message || ff.When != "call" || !strings.HasPrefix(ff.NodeID, "test_grad.py::test_grad[cuda-2-3]") {
		t.Errorf("first failure in the record: %+v", log.FirstFailure)
	}
	v, err := report.Load(w.out)
	if err != nil {
		t.Fatal(err)
	}
	if v.Reproducer == nil || v.Reproducer.FirstMessage != message {
		t.Errorf("the verdict's first error is not the whole message: %+v", v.Reproducer)
	}
}

func TestStageWorkerLogPythonPath(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	env := newTestEnv(t, map[string]string{"PYTHONPATH": "/from/step"}).Env
	for _, tt := range []struct {
		extra []string
		want  string
	}{
		{nil, ":/from/step"},
		{[]string{"PYTHONPATH=/from/spec"}, ":/from/spec"},
	} {
		s, err := stageWorkerLog(env, out, tt.extra)
		if err != nil {
			t.Fatal(err)
		}
		var pp string
		for _, kv := range s.env {
			if v, ok := strings.CutPrefix(kv, "PYTHONPATH="); ok {
				pp = v
			}
		}
		dir, rest, _ := strings.Cut(pp, ":")
		if ":"+rest != tt.want {
			t.Errorf("PYTHONPATH = %q, want the plugin folder then %q", pp, tt.want)
		}
		if _, err := os.Stat(filepath.Join(dir, workerLogModule+".py")); err != nil {
			t.Errorf("plugin not staged: %v", err)
		}
		s.cleanup()
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cleanup left %s", dir)
		}
	}
}

// The worker record's plugin keeps the xdist controller alive when it hands tests to a worker
// that died at the same moment as another (pytest-xdist issue #204: execnet's "cannot send
// (already closed?)" became an INTERNALERROR, exit 3, and the rest of the sweep never ran; on a
// 2-core machine 4 of 40 300-test runs with two workers crashing together, bench/xdistrace). The
// guard wraps the real xdist's WorkerController.send_runtest_some in the controller, swallows
// that OSError only, and leaves workers and other errors alone. Real xdist, real plugin file.
func TestWorkerRecordGuardsXdistSendsToADeadWorker(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, workerLogModule+".py"), workerLogPlugin, 0o644); err != nil {
		t.Fatal(err)
	}
	const script = `
import types
import debugflow_worker_log as plugin
from xdist.workermanage import WorkerController

class Closed:
    def sendcommand(self, name, **kwargs):
        raise OSError("cannot send (already closed?)")

class Broken:
    def sendcommand(self, name, **kwargs):
        raise ValueError("not a dead channel")

sent = []
class Alive:
    def sendcommand(self, name, **kwargs):
        sent.append((name, kwargs))

original = WorkerController.send_runtest_some
plugin._guard_xdist_sends(types.SimpleNamespace(workerinput={"workerid": "gw0"}))
assert WorkerController.send_runtest_some is original, "a worker must not patch"
try:
    WorkerController.send_runtest_some(Closed(), [1])
    raise SystemExit("unguarded: the OSError did not reach the caller")
except OSError:
    pass
plugin._guard_xdist_sends(types.SimpleNamespace())
plugin._guard_xdist_sends(types.SimpleNamespace())  # twice: wrapped once
assert WorkerController.send_runtest_some is not original
assert WorkerController.send_runtest_some.__closure__[0].cell_contents is original, "wrapped twice"
WorkerController.send_runtest_some(Closed(), [1, 2])
WorkerController.send_runtest_some(Alive(), [3])
assert sent == [("runtests", {"indices": [3]})], sent
try:
    WorkerController.send_runtest_some(Broken(), [4])
    raise SystemExit("the guard swallowed an error that is not a dead channel")
except ValueError:
    pass
print("guarded")
`
	cmd := exec.Command(py, "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "guarded" {
		t.Fatalf("%v\n%s", err, out)
	}
}
