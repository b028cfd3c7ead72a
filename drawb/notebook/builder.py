"""``builder``: the selector builder widget (``%dra builder``), a CEL selector checked and previewed as you type.

A subcommand of the notebook front end alone (``only="%dra"``): the ``drawb`` command line has no widgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drawb.commands.registry import arg, command
from drawb.errors import PROG, UsageError
from drawb.session import Session

if TYPE_CHECKING:
    from drawb.notebook.widgets import SelectorBuilder


@command(
    "builder",
    "A widget to build a CEL device selector: compile errors, matching devices and per-device errors as you type.",
    arg("--class", dest="device_class", help="run this DeviceClass's selectors first, as the scheduler does"),
    arg("--node", help="only devices on this node"),
    only="%dra",
)
def builder(session: Session, args, cell) -> SelectorBuilder:
    from traitlets import TraitError

    from drawb.notebook.widgets import SelectorBuilder

    try:
        return SelectorBuilder(session, device_class=args.device_class or "", node=args.node or "")
    except TraitError as exc:
        raise UsageError(str(exc), hint=f"`{PROG} classes` lists the DeviceClasses, `{PROG} devices` the nodes") from None
