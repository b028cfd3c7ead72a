"""DESIGN.md's layering, checked in a fresh interpreter: what each layer loads when imported.

The shared subcommands (``drawb.commands``) and the CLI never load the notebook front end or
ipywidgets; the pure core never loads the session, the subcommands, IPython or the kubernetes client.
"""

from __future__ import annotations

import importlib.util
import pkgutil
import subprocess
import sys

import drawb.commands

COMMAND_MODULES = ["drawb.cli"] + sorted(
    f"drawb.commands.{m.name}" for m in pkgutil.iter_modules(drawb.commands.__path__)
)
# drawb.alloc is being written: checked as soon as it exists
PURE_CORE = [
    m for m in ("drawb.api", "drawb.inventory", "drawb.cel", "drawb.render", "drawb.gpu", "drawb.alloc", "drawb.plan",
                "drawb.build", "drawb.map")
    if importlib.util.find_spec(m) is not None
]


def loaded_by(modules: list[str], watched: list[str]) -> list[str]:
    """Which of ``watched`` (or their submodules) are in sys.modules after importing ``modules``."""
    probe = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"watched = {watched!r}\n"
        "print(','.join(sorted({w for w in watched for m in sys.modules if m == w or m.startswith(w + '.')})))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return [name for name in out.stdout.strip().split(",") if name]


def test_the_module_lists_are_complete():
    assert {"drawb.commands.registry", "drawb.commands.read", "drawb.commands.select"} <= set(COMMAND_MODULES)
    assert {"drawb.api", "drawb.inventory", "drawb.cel", "drawb.render", "drawb.gpu"} <= set(PURE_CORE)


def test_commands_and_cli_load_no_notebook_code():
    assert loaded_by(COMMAND_MODULES, ["drawb.notebook", "ipywidgets"]) == []


def test_pure_core_loads_no_session_commands_ipython_or_kubernetes():
    assert loaded_by(PURE_CORE, ["drawb.session", "drawb.commands", "IPython", "kubernetes"]) == []
