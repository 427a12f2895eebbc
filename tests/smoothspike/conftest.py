"""smoothspike's tests never read or write the user's cache of trained students: a fresh folder per session."""

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_student_cache(tmp_path_factory):
    old = os.environ.get("ICML26_CACHE")
    os.environ["ICML26_CACHE"] = str(tmp_path_factory.mktemp("icml26-cache"))
    yield
    if old is None:
        os.environ.pop("ICML26_CACHE", None)
    else:
        os.environ["ICML26_CACHE"] = old
