"""Makes the flaky suite's output as hard on a log reader as a crashing xdist worker's.

When a worker crashes, its faulthandler dump goes to stderr a few bytes at a time while the
controller prints result lines on stdout, each in several writes ("[gw0] [ 7%] ", "PASSED",
" test_flaky.py::test_kernel[cuda-9-100]"). Bytes of the dump that land between those writes
cut the result line apart, and whoever reads one pipe for both streams loses the result. That
happens by chance; here it happens every time: on the controller, every status word of a
result line is followed by a line on stderr before the test id is written. debugflow's
experiment and bisect tests count on every trial being counted (testenv.FlakyDraws), so a
reader that lets stderr cut stdout's lines fails them on every run.
"""
import os

import pytest

NOISE = b"Current thread 0x00007f3a2b4c5700 (most recent call first):\n"
WORDS = {"PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS", "RERUN"}


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if hasattr(config, "workerinput"):  # an xdist worker: the controller prints the results
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    tw = reporter._tw
    write = tw.write

    def write_then_stderr(msg, **kwargs):
        write(msg, **kwargs)
        if msg in WORDS:
            tw.flush()
            os.write(2, NOISE)

    tw.write = write_then_stderr
