#!/usr/bin/env python3
# Run one test function in a loop, outside pytest, so py-spy can watch a single process.
# Written by `debugflow-step stage`; edit freely. Run it from anywhere:
#
#     /usr/bin/python3 '/tmp/my repro'/repro_standalone.py [N] [--file FILE] [--test NAME]
#     py-spy record --native -o profile.svg -- /usr/bin/python3 '/tmp/my repro'/repro_standalone.py
#     py-spy dump --native --pid <PID>        # while it hangs
#
# It first sets the job's environment (a variable already set wins), and faulthandler prints the
# Python stack of every thread to stderr every 15 seconds (--dump-after),
# so a hang shows where it sits even without py-spy.
#
# Limitations: the test is called directly. pytest fixtures (including autouse fixtures and those
# of conftest.py), @pytest.mark.parametrize and other marks are NOT applied, so a test that takes
# arguments is refused with a message. Use run_reproducer.sh for those.

import faulthandler
import os
import sys

# The job's environment as the workflow's stage step saw it.
JOB_ENV = [
    ("QUADRANTS_CMAKE_ARGS", "-DQD_WITH_VULKAN:BOOL=OFF -DQD_WITH_CUDA:BOOL=ON"),
    ("TRICKY", "\"\"\"+__import__(\"os\").system(\"touch PWNED\")+\"\"\" `touch PWNED` $(touch PWNED) | ''' \\"),
    ("EMPTY", ""),
]
for _name, _value in JOB_ENV:
    os.environ.setdefault(_name, _value)

# The checkout, where the workflow's steps ran; the interpreter that has the project.
CHECKOUT = "/home/runner/work/my project/it's"
PYTHON = "/usr/bin/python3"

import argparse
import importlib.util
import inspect
import time
import traceback

DEFAULT_FILE = "tests/python/test \"quoted\".py"
DEFAULT_TEST = "test_one"
DEFAULT_COUNT = 7


def import_path(path):
    """Import a test file the way pytest's default "prepend" import mode does.

    The first directory above the file without an __init__.py goes to the front of sys.path and
    the module is imported under its dotted package name, so imports inside the test resolve as
    they do under pytest.
    """
    path = os.path.abspath(path)
    base = os.path.dirname(path)
    names = [os.path.splitext(os.path.basename(path))[0]]
    while os.path.isfile(os.path.join(base, "__init__.py")):
        names.insert(0, os.path.basename(base))
        base = os.path.dirname(base)
    if base not in sys.path:
        sys.path.insert(0, base)
    if os.getcwd() not in sys.path:
        sys.path.insert(1, os.getcwd())
    name = ".".join(names)
    if len(names) > 1:
        return importlib.import_module(name)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def required_parameters(func):
    """Names of the parameters a call without arguments would leave unbound."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in params
        if p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run one test function N times outside pytest.")
    parser.add_argument("count", nargs="?", type=int, default=DEFAULT_COUNT, help="how many calls (default %(default)s)")
    parser.add_argument("--file", default=DEFAULT_FILE, help="test file, relative to the checkout (default %(default)s)")
    parser.add_argument("--test", default=DEFAULT_TEST, help="test function name (default %(default)s)")
    parser.add_argument("--dump-after", type=float, default=15.0, help="seconds between faulthandler stack dumps (0: off)")
    args = parser.parse_args(argv)
    if not args.file or not args.test:
        parser.error("name the test with --file FILE --test NAME")
    if args.count < 1:
        parser.error("count must be 1 or more")
    if CHECKOUT and os.path.isdir(CHECKOUT) and not os.path.isfile(args.file):
        os.chdir(CHECKOUT)
    if not os.path.isfile(args.file):
        parser.error("%s not found: run this from the checkout root" % args.file)

    faulthandler.enable()
    if args.dump_after > 0:
        faulthandler.dump_traceback_later(args.dump_after, repeat=True)

    try:
        module = import_path(args.file)
    except ImportError:
        traceback.print_exc()
        print(
            "repro_standalone: cannot import %s with %s: run it with the interpreter that has the "
            "project and pytest installed (%s in the workflow)" % (args.file, sys.executable, PYTHON),
            file=sys.stderr,
        )
        return 2
    func = getattr(module, args.test, None)
    if func is None or not callable(func):
        print("repro_standalone: %s has no test function %s" % (args.file, args.test), file=sys.stderr)
        return 2
    missing = required_parameters(func)
    if missing:
        print(
            "repro_standalone: %s takes arguments (%s): fixtures and parametrization need pytest; "
            "use run_reproducer.sh instead" % (args.test, ", ".join(missing)),
            file=sys.stderr,
        )
        return 2

    print("repro_standalone: pid %d, %s::%s x %d" % (os.getpid(), args.file, args.test, args.count), flush=True)
    for i in range(1, args.count + 1):
        start = time.monotonic()
        try:
            func()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # pytest.fail and pytest.skip raise BaseException subclasses
            if type(exc).__name__ == "Skipped":
                print("repro_standalone: the test skipped itself: %s" % exc, flush=True)
                return 0
            traceback.print_exc()
            print("repro_standalone: FAILED on call %d of %d" % (i, args.count), flush=True)
            return 1
        print("repro_standalone: call %d of %d passed in %.2fs" % (i, args.count, time.monotonic() - start), flush=True)
    faulthandler.cancel_dump_traceback_later()
    print("repro_standalone: all %d calls passed" % args.count, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
