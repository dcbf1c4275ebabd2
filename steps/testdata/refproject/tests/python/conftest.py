"""The reference project's worker retirement (tests/python/conftest.py) and its xdist fork's line.

After a failed test the worker exits so that the next test gets a fresh process (a clean GPU
state). Before exiting it leaves a marker, so that the controller's pytest_handlecrashitem can
tell this exit from a real crash and turn xdist's synthetic crash report into an invisible one.
The reference project's pinned pytest-xdist fork also prints one line per crashed worker,
"worker 'gw0' crashed while running 'python/test_ad.py::...'", with the node id relative to
the rootdir (tests/), not to the checkout: emulated here by FORK_CRASH_LINE.
"""
import os
import tempfile

import pytest


def _exit_marker_dir():
    return os.environ.get("_QD_XDIST_EXIT_MARKER_DIR")


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if os.environ.get("_QD_XDIST_EXIT_MARKER_DIR"):
        return
    d = os.path.join(tempfile.gettempdir(), f"qd_xdist_exits_{os.getpid()}")
    os.makedirs(d, exist_ok=True)
    os.environ["_QD_XDIST_EXIT_MARKER_DIR"] = d


def pytest_unconfigure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    d = _exit_marker_dir()
    if d and os.path.isdir(d):
        import shutil

        shutil.rmtree(d, ignore_errors=True)
    os.environ.pop("_QD_XDIST_EXIT_MARKER_DIR", None)


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if report.outcome not in ("error", "failed"):
        return
    d = _exit_marker_dir()
    if d:
        worker_id = os.environ["PYTEST_XDIST_WORKER"]
        try:
            with open(os.path.join(d, worker_id), "w") as f:
                f.write(report.nodeid)
        except OSError:
            pass
    os._exit(1)


FORK_CRASH_LINE = "worker %r crashed while running %r"


def pytest_handlecrashitem(crashitem, report, sched):
    node = getattr(report, "node", None)
    if node is None:
        return
    worker_id = node.gateway.id
    # The fork's line, for every crashed or retired worker: the id as xdist has it.
    terminal = node.config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        terminal.write_line(FORK_CRASH_LINE % (worker_id, crashitem))
    d = _exit_marker_dir()
    if not d:
        return
    marker = os.path.join(d, worker_id)
    if not os.path.exists(marker):
        return
    try:
        os.unlink(marker)
    except OSError:
        pass
    report.outcome = "passed"
    report.when = "teardown"
    report.longrepr = None
    return True
