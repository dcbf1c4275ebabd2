"""Collection that takes long (a conftest waiting at import, as one waiting
for a GPU would): $READY_FILE is created when it starts waiting."""
import os
import time

open(os.environ["READY_FILE"], "w").close()
time.sleep(300)
