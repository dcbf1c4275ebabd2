"""A stand-in for pytest-retry (not packaged by Debian), as far as its console output goes.

pytest-retry (str0zzapreti/pytest-retry) runs a failed call of a test marked
@pytest.mark.flaky(retries=N) again, up to N times. It logs the first failed attempt as a report
whose outcome is "retried", shown as RETRY (letter R), then the test's own report with the
outcome of its last attempt; the final line counts "N retried", and a section "the following
tests were retried" lists each attempt. Only that reporting is reproduced here, on the same
hooks (pytest_runtest_makereport, pytest_report_teststatus, pytest_terminal_summary); the
plugin's other options are not, and under xdist the retry section stays in the workers (the
plugin gathers it in the controller over a socket).
"""
import pytest

_attempts = []


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    mark = item.get_closest_marker("flaky")
    if call.when != "call" or call.excinfo is None or report.skipped or mark is None:
        return
    retries = mark.kwargs.get("retries", 1)
    report.outcome = "retried"
    item.ihook.pytest_runtest_logreport(report=report)
    report.outcome = "failed"
    _attempts.append("\t%s failed on attempt 1! Retrying!\n" % item.name)
    for attempt in range(2, retries + 2):
        item._initrequest()
        pytest.CallInfo.from_call(lambda: item.ihook.pytest_runtest_setup(item=item), when="setup")
        again = pytest.CallInfo.from_call(lambda: item.ihook.pytest_runtest_call(item=item), when="call")
        retry = pytest.TestReport.from_item_and_call(item, again)
        if retry.passed or attempt == retries + 1:
            report.outcome, report.longrepr = retry.outcome, retry.longrepr
            verdict = "passed" if retry.passed else "failed after %d attempts!" % attempt
            if retry.passed:
                verdict = "passed on attempt %d!" % attempt
            _attempts.append("\t%s %s\n" % (item.name, verdict))
            return
        _attempts.append("\t%s failed on attempt %d! Retrying!\n" % (item.name, attempt))


def pytest_report_teststatus(report):
    if report.outcome == "retried":
        return "retried", "R", ("RETRY", {"yellow": True})
    return None


def pytest_terminal_summary(terminalreporter):
    if _attempts:
        terminalreporter.write("\n")
        terminalreporter.section("the following tests were retried", sep="=", bold=True, yellow=True)
        terminalreporter.write("".join(_attempts))
        terminalreporter.section("end of test retry report", sep="=", bold=True, yellow=True)


def pytest_configure(config):
    config.addinivalue_line("markers", "flaky(retries=1): retry a failed test")
