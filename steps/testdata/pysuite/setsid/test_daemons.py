"""A test that leaves processes behind outside pytest's process group, then
sleeps: one in a session of its own (start_new_session, like setsid), one
daemonised by a double fork (adopted by init). Both carry $MARKER on their
command line; $READY_FILE is created once they run."""
import os
import subprocess
import sys
import time

SLEEPER = "import time; time.sleep(300)"


def test_leaves_daemons():
    marker = os.environ["MARKER"]
    subprocess.Popen([sys.executable, "-c", SLEEPER, marker, "own-session"], start_new_session=True)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", SLEEPER, marker, "double-fork"])
        os._exit(0)
    os.waitpid(pid, 0)
    time.sleep(0.5)
    open(os.environ["READY_FILE"], "w").close()
    time.sleep(300)
