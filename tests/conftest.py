"""Shared test helpers: the fixtures and captures in tests/data, and a real IPython shell."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, settings
from IPython.core.interactiveshell import InteractiveShell

pytest_plugins = ["tests.credscan", "pytester"]  # fail any test whose output shows a credential

# Property tests check results, not speed: no per-example deadline and no too-slow health check, which a
# 2-core CI shared with the rest of the suite trips (speed is measured in bench/).
settings.register_profile("drawb", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("drawb")

DATA = Path(__file__).resolve().parent / "data"
FIXTURES = DATA / "fixtures"
CAPTURES = DATA / "captures"


@pytest.fixture(autouse=True)
def _own_state_home(tmp_path_factory, monkeypatch) -> None:
    """Each test its own state folder: the command line keeps its simulated cluster there between commands,
    and a test must start from a fresh one (and never touch the user's)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


def load_fixture(name: str) -> list[dict]:
    """The items of a ``kubectl get -o yaml`` List in tests/data/fixtures."""
    return yaml.safe_load((FIXTURES / name).read_text())["items"]


@pytest.fixture(scope="session")
def fixture_slices() -> list[dict]:
    """The main ResourceSlice fixture (4 GPU nodes, 38 GPU/MIG devices)."""
    return load_fixture("resourceslices.yaml")


class Shell:
    """Runs cells in a real InteractiveShell and returns their value or raises their error."""

    def __init__(self, ipython: InteractiveShell):
        self.ipython = ipython

    def run(self, code: str):
        result = self.ipython.run_cell(code, store_history=False)
        if result.error_before_exec:
            raise result.error_before_exec
        if result.error_in_exec:
            raise result.error_in_exec
        return result.result

    def fails(self, code: str) -> str:
        """Run a cell whose %dra command must fail its cell; return what the user sees (no traceback)."""
        from drawb.notebook.magics import CommandFailed

        result = self.ipython.run_cell(code, store_history=False)
        assert isinstance(result.error_in_exec, CommandFailed), result.error_in_exec
        return "\n".join(result.error_in_exec._render_traceback_())

    def get(self, name: str):
        return self.ipython.user_ns[name]


@pytest.fixture
def shell():
    """The one IPython shell, with drawb (re)loaded and no DRAMagics config left from other tests; its
    session's watches are stopped afterwards (a cluster a test connected to may be gone by then)."""
    ipython = InteractiveShell.instance()
    ipython.config.pop("DRAMagics", None)
    if "drawb" in ipython.extension_manager.loaded:
        ipython.extension_manager.reload_extension("drawb")
    else:
        ipython.extension_manager.load_extension("drawb")
    yield Shell(ipython)
    ipython.magics_manager.registry["DRAMagics"].session.close()
