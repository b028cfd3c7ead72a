"""``select``: preview a CEL device selector on the cluster's devices (``%%dra select`` and ``drawb select``).

The cell (or the rest of the line) is the expression. The result shows the matching devices, the
devices where evaluation errors (the scheduler's message), or the API server's compile error with its
caret. ``--class`` runs a DeviceClass's selectors first, as the scheduler does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drawb.commands.registry import arg, command
from drawb.errors import UsageError
from drawb.session import Session

if TYPE_CHECKING:
    from drawb.cel import SelectResult


def _gates(values: list[str] | None) -> dict[str, bool] | None:
    if not values:
        return None
    gates = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or value.lower() not in ("true", "false"):
            raise UsageError(f"--gate {item!r}: expected NAME=true or NAME=false", hint="e.g. --gate DRAListTypeAttributes=true")
        gates[name] = value.lower() == "true"
    return gates


@command(
    "select",
    "Preview a CEL device selector: matching devices, per-device errors, or the API server's compile error.",
    arg("expression", nargs="*", help="the CEL expression (or put it in the %%dra select cell)"),
    arg("--class", dest="device_class", help="run this DeviceClass's selectors first, as the scheduler does"),
    arg("--kubernetes-version", dest="version", help="the version whose CEL rules apply (default: the session's)"),
    arg("--gate", action="append", metavar="NAME=BOOL", help="a feature gate, e.g. DRAListTypeAttributes=true"),
    cell="the CEL expression",
)
def select_command(session: Session, args, cell: str | None) -> SelectResult:
    """Preview the expression on the connected cluster's devices."""
    from drawb.cel import preview  # imported on use: keeps %load_ext fast

    expression = cell if cell is not None and cell.strip() else " ".join(args.expression)
    if not expression.strip():
        raise UsageError("select needs a CEL expression", hint='e.g. %%dra select with device.driver == "gpu.nvidia.com"')
    cluster = session.cluster
    classes = cluster.list("DeviceClass") if args.device_class else []
    frame = session.devices()
    try:
        return preview(
            frame,
            expression.strip(),
            device_classes=classes,
            class_name=args.device_class,
            kubernetes_version=args.version or session.kubernetes_version,
            feature_gates=_gates(args.gate),
        )
    except KeyError as exc:
        raise UsageError(str(exc.args[0]), hint="`%dra classes` lists the DeviceClasses") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
