"""debugflow's worker record: which pytest process ran which test, and when.

`debugflow-step reproduce` loads this module with `-p debugflow_worker_log` from a temporary
folder it puts on PYTHONPATH; nothing is installed into the project under test. `sanitize` and
`coredump` load it too, with $DEBUGFLOW_WORKER_LOG empty: no record, only the -v kept. Every pytest
process (the xdist controller, each worker, or pytest alone without xdist) appends one JSON line
when it starts and one per test start and finish to $DEBUGFLOW_WORKER_LOG, and stops writing at
$DEBUGFLOW_WORKER_LOG_MAX bytes. A process's first failing test also gets a "failed" line with
the failure's message, whole: pytest prints its reports only when the session ends, which a run
stopped at its first failure (SIGTERM) never reaches. A failed setup or call whose report pytest
has not logged when the test's teardown begins gets a "held_failure" line with the test's whole
id, before the teardown runs: a retry plugin held the report back. The flaky plugin logs only a
test's last attempt, so a failed attempt it runs again has no other trace than its own report at
the session's end, by the test's name alone, which a crashed xdist worker never sends to the
controller; pytest-rerunfailures logs each attempt's reports after its teardown (RERUN or
FAILED), so its failed attempts get one too. A worker's process id is what the kernel's Xid lines name
(pid=...): the record links each Xid to a worker and the test it was running. Writes are single
O_APPEND writes, so the processes' lines never interleave, and a line is on disk before the test
runs: a worker that dies in a test leaves its start line behind.

Test ids are written as pytest prints them: relative to pytest's working directory (the
checkout), not to its rootdir. With a tests/pytest.ini the rootdir is tests/ and a node id is
"python/test_x.py::t" while pytest prints "tests/python/test_x.py::t"; the record, the reproducer
summary and the crash lines must name one test one way. The controller also prints the rootdir's
place in pytest's header ('debugflow: rootdir is "tests" under the working directory') so that
the log parser can place the ids of xdist's crash lines, which are relative to the rootdir.

The record must never break a test run: any error turns it off for that process.
"""
import json
import os
import time

import pytest

_fd = None
_worker = None
_limit = 16 << 20
_stopped = False
_failed = False
_max_message = 4096
_prefix = ""
_prefix_env = "DEBUGFLOW_ROOT_PREFIX"


def _worker_name(config):
    name = os.environ.get("PYTEST_XDIST_WORKER")
    if name:
        return name
    workerinput = getattr(config, "workerinput", None)
    if workerinput and workerinput.get("workerid"):
        return workerinput["workerid"]
    option = getattr(config, "option", None)
    numprocesses = getattr(option, "numprocesses", None)
    if numprocesses and getattr(option, "dist", "no") != "no":
        return "controller"
    return "main"


def _root_prefix(config):
    """The rootdir relative to the working directory ("" when they are the same).

    The controller computes it and leaves it in the environment: its workers inherit it (an
    xdist worker's invocation directory need not be the controller's)."""
    inherited = os.environ.get(_prefix_env)
    if inherited is not None:
        return inherited
    rootpath = getattr(config, "rootpath", None) or getattr(config, "rootdir", None)
    invocation = getattr(getattr(config, "invocation_params", None), "dir", None) or os.getcwd()
    prefix = os.path.relpath(str(rootpath), str(invocation)).replace(os.sep, "/")
    if prefix == ".":
        prefix = ""
    os.environ[_prefix_env] = prefix
    return prefix


def _id(nodeid):
    """nodeid relative to the working directory, as pytest prints it."""
    if not _prefix or not nodeid:
        return nodeid
    return _prefix + "/" + nodeid


def pytest_report_header(config):
    if _prefix:
        return ["debugflow: rootdir is %s under the working directory" % json.dumps(_prefix)]
    return None


def _write(phase, nodeid=None, extra=None):
    global _fd, _stopped
    if _fd is None or _stopped:
        return
    record = {"v": 1, "worker": _worker, "pid": os.getpid(), "phase": phase,
              "time": time.time(), "mono": time.monotonic()}
    if nodeid is not None:
        record["nodeid"] = nodeid
    if extra:
        record.update(extra)
    try:
        line = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")
        if os.fstat(_fd).st_size + len(line) > _limit:
            _stopped = True
            record = {"v": 1, "worker": _worker, "pid": os.getpid(), "phase": "truncated",
                      "time": time.time(), "mono": time.monotonic()}
            line = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")
        os.write(_fd, line)
    except Exception:
        _fd = None


def _guard_xdist_sends(config):
    """Keep the xdist controller alive when it hands tests to a worker that just died.

    When a crashed worker's tests are handed to another worker that crashed at the same moment
    and whose death xdist has not processed yet, execnet raises "cannot send (already closed?)"
    and the controller dies with an INTERNALERROR: pytest exits 3 and the rest of the sweep never
    runs (pytest-xdist issue #204, open). xdist already ignores that error when it sends
    "shutdown" to a dead worker; we ignore it for "runtests" the same way. The tests stay
    assigned to that worker, and when xdist processes its death it hands them on, with the
    test the worker died in reported as its crash, as for any crash.
    """
    if getattr(config, "workerinput", None) is not None:
        return  # a worker: nothing to send
    try:
        from xdist.workermanage import WorkerController
    except Exception:
        return
    original = getattr(WorkerController, "send_runtest_some", None)
    if original is None or getattr(original, "_debugflow_guard", False):
        return

    def send_runtest_some(self, indices):
        try:
            return original(self, indices)
        except OSError:
            pass

    send_runtest_some._debugflow_guard = True
    WorkerController.send_runtest_some = send_runtest_some


def _at_least_verbose(config):
    """The reproducer passes -v: its log must say every test's result on a line of its own that
    names the test (the experiment's trial counter and the live parser read those). A -q in the
    project's addopts (pytest's own docs suggest "addopts = -ra -q") or in PYTEST_ADDOPTS
    cancels it, and the log had progress dots only: the trials were the failures alone (15 of 15
    for a test failing 15 of 40). Under the sanitizer, -qqq also hid pytest's session rule and
    final line, which the sanitizer's verdict needs. The verbosity is raised back to that of -v."""
    option = getattr(config, "option", None)
    if option is not None and getattr(option, "verbose", 1) < 1:
        option.verbose = 1


def pytest_configure(config):
    global _fd, _worker, _limit, _prefix
    try:
        _guard_xdist_sends(config)
    except Exception:
        pass
    try:
        _at_least_verbose(config)
    except Exception:
        pass
    try:
        _prefix = _root_prefix(config)
    except Exception:
        _prefix = ""
    try:
        path = os.environ.get("DEBUGFLOW_WORKER_LOG")
        if not path:
            return
        _limit = int(os.environ.get("DEBUGFLOW_WORKER_LOG_MAX", _limit))
        _worker = _worker_name(config)
        _fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        _write("session", extra={"tz_offset": time.localtime().tm_gmtoff})
    except Exception:
        _fd = None


def pytest_runtest_logstart(nodeid, location):
    # xdist replays the workers' logstart/logfinish in the controller: record only where the
    # test runs.
    if _worker != "controller":
        _write("start", _id(nodeid))


def pytest_runtest_logfinish(nodeid, location):
    if _worker != "controller":
        try:
            _write_held()
        except Exception:
            pass
        _write("finish", _id(nodeid))


def _repeat_base(nodeid, i, n):
    """nodeid without pytest-repeat's "i-n" ("t.py::x[cuda-3-6]" -> "t.py::x[cuda]"), or None."""
    suffix = "%d-%d]" % (i, n)
    if nodeid.endswith("[" + suffix):
        return nodeid[:-len(suffix) - 1]
    if nodeid.endswith("-" + suffix):
        return nodeid[:-len(suffix) - 1] + "]"
    return None


def pytest_collection_finish(session):
    """One line per test that pytest-repeat runs its own number of times: @pytest.mark.repeat(n)
    overrides --count, and its ids ("t.py::test_x[3-6]") cannot tell debugflow so when n is the
    count, or without --count. The line names the test's first selected repetition (-k may
    leave out some) and n. Every worker collects the same tests, and each replacement of a
    crashed one again: only the first worker (gw0) or pytest alone writes them, so a run with
    many crashes does not spend the record's size bound on copies."""
    if _worker not in ("gw0", "main"):
        return
    try:
        seen = set()
        for item in session.items:
            mark = item.get_closest_marker("repeat")
            spec = getattr(item, "callspec", None)
            if mark is None or spec is None or "__pytest_repeat_step_number" not in spec.params:
                continue
            n = int(mark.args[0])
            base = _repeat_base(item.nodeid, spec.params["__pytest_repeat_step_number"] + 1, n)
            if n >= 2 and base is not None and base not in seen:
                seen.add(base)
                _write("repeat", _id(item.nodeid), {"n": n})
    except Exception:
        pass


def _message(report):
    """The failure's message as pytest's report says it ("AssertionError: ..."), first line."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    if not message:
        message = str(report.longrepr or "")
    lines = [line for line in message.splitlines() if line.strip()]
    return lines[0][:_max_message] if lines else ""


# A failed setup or call whose report pytest has not logged yet: (nodeid, when, message).
_unlogged = None


# The outermost wrapper sees the report as the other plugins' wrappers leave it (an xfail is
# skipped). The flaky plugin makes the report of every attempt through this hook and logs only
# the last attempt's.
@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    global _unlogged
    outcome = yield
    if _worker == "controller" or _fd is None:
        return
    try:
        _write_held()
        report = outcome.get_result()
        if report.failed and report.when in ("setup", "call"):
            _unlogged = (_id(report.nodeid), report.when, _message(report))
    except Exception:
        _unlogged = None


def _write_held():
    """A failed report pytest has not logged by the time the test moves on: one "held_failure"
    line."""
    global _unlogged
    if _unlogged is not None:
        nodeid, when, message = _unlogged
        _unlogged = None
        _write("held_failure", nodeid, {"when": when, "message": message})


# tryfirst: before the teardown runs, so a worker that dies in it has the line on disk. The
# flaky plugin tears the failed attempt down before running the test again.
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    try:
        _write_held()
    except Exception:
        pass


# tryfirst: an xdist worker sends each report to the controller from its own
# pytest_runtest_logreport, and a run stopped at its first failure is killed as soon as the
# controller prints that report. The failure line must be on disk before the report leaves.
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    global _failed, _unlogged
    try:
        if _unlogged is not None and _unlogged[:2] == (_id(report.nodeid), report.when):
            _unlogged = None  # reported in time: a failure like any other
    except Exception:
        _unlogged = None
    # One per process: the first failure of the run is the earliest of these.
    if _worker == "controller" or _failed or not report.failed:
        return
    _failed = True
    try:
        message = _message(report)
    except Exception:
        message = ""
    _write("failed", _id(report.nodeid), {"when": report.when, "message": message})
