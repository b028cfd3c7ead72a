"""Which process runs a drawb command that writes (an annotation on what a check creates, the owner of an apply's
journal), and whether that process still runs: so a cleanup can tell what a killed run left from the objects of
a running one."""

from __future__ import annotations

import os
import socket
from pathlib import Path

OWNER_ANNOTATION = "drawb/run-by"  # host/pid/start: the process that runs the check (or doctor's probe)


def _start_ticks(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot; tells a reused pid apart), None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22, counted after the command name


def this_process() -> str:
    """This process as the annotation names it: ``host/pid/start``."""
    return f"{socket.gethostname()}/{os.getpid()}/{_start_ticks(os.getpid()) or ''}"


def still_running(owner: str) -> bool | None:
    """Whether the process an annotation names still runs; None when it ran on another host (or it is no
    annotation of drawb's): nobody here can tell."""
    host, _, rest = owner.partition("/")
    pid, _, started = rest.partition("/")
    if host != socket.gethostname() or not pid.isdigit():
        return None
    return _start_ticks(int(pid)) == started
