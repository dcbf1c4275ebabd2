# The checkout's root on sys.path, so the tests import fakeproj as the real suite imports its project.
