"""Checks that the reproducer runs with the job's environment: what the install and build
exported (TOOL_DIR and its bin on PATH, BUILD_DIR), not what the build only sourced."""
import os
import shutil

import fakeproj


def test_sees_the_exports():
    build_dir = os.environ.get("BUILD_DIR", "")
    seen = "BUILD_DIR=%s\nfaketool=%s\nFAKE_CMAKE_ARGS=%s\nLIB=%s\nINSTALL_FLAVOUR=%s\n" % (
        build_dir, shutil.which("faketool"), os.environ.get("FAKE_CMAKE_ARGS", ""), fakeproj.CMAKE_ARGS,
        os.environ.get("INSTALL_FLAVOUR", ""))
    with open(os.path.join(os.path.dirname(__file__), "..", "seen_by_pytest.txt"), "a") as f:
        f.write(seen)
    assert os.path.isdir(build_dir), seen
    assert shutil.which("faketool"), seen
