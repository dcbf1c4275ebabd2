#!/usr/bin/env python3
# Run the project's 'scripts/repro'\''s "cuda".py' outside pytest, so py-spy can watch one process.
# Written by `debugflow-step stage`; edit freely. Run it from anywhere:
#
#     python3 /tmp/repro/repro_standalone.py [ARGS...]
#     py-spy record --native -o profile.svg -- python3 /tmp/repro/repro_standalone.py
#     py-spy dump --native --pid <PID>        # while it hangs
#
# It first sets the job's environment (a variable already set wins), and faulthandler prints the
# Python stack of every thread to stderr every 15 seconds (REPRO_DUMP_AFTER=SECONDS; 0: off),
# so a hang shows where it sits even without py-spy.

import faulthandler
import os
import sys

# The job's environment as the workflow's stage step saw it.
JOB_ENV = [
    ("CUDA_LAUNCH_BLOCKING", "1"),
]
for _name, _value in JOB_ENV:
    os.environ.setdefault(_name, _value)

# The checkout, where the workflow's steps ran; the interpreter that has the project.
CHECKOUT = ""
PYTHON = "python3"

import runpy

SCRIPT = "scripts/repro's \"cuda\".py"

faulthandler.enable()
if float(os.environ.get("REPRO_DUMP_AFTER", "15")) > 0:
    faulthandler.dump_traceback_later(float(os.environ.get("REPRO_DUMP_AFTER", "15")), repeat=True, file=sys.stderr)
if CHECKOUT and os.path.isdir(CHECKOUT):
    os.chdir(CHECKOUT)
if not os.path.isfile(SCRIPT):
    sys.exit("repro_standalone: %s not found in %s: run it from the checkout" % (SCRIPT, os.getcwd()))
sys.argv[0] = SCRIPT
sys.path[:0] = [os.path.dirname(os.path.abspath(SCRIPT)), os.getcwd()]
runpy.run_path(SCRIPT, run_name="__main__")
