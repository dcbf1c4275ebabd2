"""The reference project's conftest.py imports pytest-rerunfailures, which the
runner does not have: collection fails before any test runs."""
import pytest_rerunfailures  # noqa: F401
