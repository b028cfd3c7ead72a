"""A real IPython shell with drawb loaded, whose cells re-raise their errors."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell


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

    def get(self, name: str):
        return self.ipython.user_ns[name]


@pytest.fixture
def shell() -> Shell:
    ipython = InteractiveShell.instance()
    ipython.config.pop("DRAMagics", None)
    if "drawb" in ipython.extension_manager.loaded:
        ipython.extension_manager.reload_extension("drawb")
    else:
        ipython.extension_manager.load_extension("drawb")
    return Shell(ipython)
