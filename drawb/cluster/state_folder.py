"""Where drawb keeps what outlives a command on this machine: the kept simulated clusters and the journals of
applies under way (``$XDG_STATE_HOME/drawb``, else ``~/.local/state/drawb``)."""

from __future__ import annotations

import os
from pathlib import Path

STATE_HOME_ENV = "XDG_STATE_HOME"


def state_dir() -> Path:
    """Where drawb keeps its state: ``$XDG_STATE_HOME/drawb``, else ``~/.local/state/drawb``."""
    home = os.environ.get(STATE_HOME_ENV) or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(home) / "drawb"
