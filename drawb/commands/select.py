"""``select``: preview a CEL device selector on the cluster's devices (``%%dra select`` and ``drawb select``).

The cell (or the rest of the line) is the expression. The result shows the matching devices, the
devices where evaluation errors (the scheduler's message), or the API server's compile error with its
caret. ``--class`` runs a DeviceClass's selectors first, as the scheduler does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drawb.commands.registry import arg, command
from drawb.errors import PROG, UsageError
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

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
    arg("expression", nargs="*", help="the CEL expression: the rest of the line, as written (or the cell's text)"),
    arg("--class", dest="device_class", help="run this DeviceClass's selectors first, as the scheduler does"),
    arg("--kubernetes-version", dest="version", help="the version whose CEL rules apply (default: the connected cluster's)"),
    arg("--gate", action="append", metavar="NAME=BOOL", help="a feature gate, e.g. DRAListTypeAttributes=true"),
    cell="the CEL expression",
    raw_rest="expression",
)
def select_command(session: Session, args, cell: str | None) -> SelectResult:
    """Preview the expression on the connected cluster's devices (the line form takes the rest of the line as written)."""
    written = args.expression if isinstance(args.expression, str) else " ".join(args.expression)
    expression = cell if cell is not None and cell.strip() else written
    if not expression.strip():
        raise UsageError("select needs a CEL expression", hint=f"e.g. `{PROG} select 'device.driver == \"gpu.nvidia.com\"'`")
    return select_devices(
        session,
        session.devices(),
        expression.strip(),
        class_name=args.device_class,
        kubernetes_version=args.version,
        feature_gates=_gates(args.gate),
    )


def select_devices(
    session: Session,
    frame: pd.DataFrame,
    expression: str | list[str],
    *,
    class_name: str | None = None,
    kubernetes_version: str | None = None,
    feature_gates: dict[str, bool] | None = None,
) -> SelectResult:
    """Which devices of ``frame`` a DeviceClass's selectors, then ``expression`` (none: ``[]``), select,
    evaluated as the scheduler does; devices whose evaluation errors are in the result's ``errors``.

    ``%%dra select --class`` and ``%dra devices --class`` both go through here.
    """
    from drawb.cel import preview  # imported on use: keeps %load_ext fast
    from drawb.cel.env import UnsupportedEnvironment
    from drawb.cel.frames import UnknownDeviceClass
    from drawb.cel.vector import IncompleteFrame
    from drawb.plan.target import scheduler_target

    classes = session.cluster.list("DeviceClass") if class_name else []
    version = kubernetes_version or scheduler_target(session.cluster, session.rules_version).kubernetes_version
    try:
        return preview(
            frame,
            expression,
            device_classes=classes,
            class_name=class_name,
            kubernetes_version=version,
            feature_gates=feature_gates,
        )
    except (UnknownDeviceClass, UnsupportedEnvironment, IncompleteFrame) as exc:
        raise UsageError(str(exc), hint=exc.hint) from None


def errors_warning(result: SelectResult, limit: int = 10) -> str:
    """The devices whose evaluation errors, as a warning beside a result that leaves them out."""
    errors = result.errors
    columns = [c for c in ("node", "driver", "pool", "device", "error") if c in errors]
    lines = [
        f"SelectorErrors: {result.error_count} device(s) error in the selectors and are left out; "
        "the scheduler aborts an allocation that reaches them:",
        errors[columns].head(limit).to_string(index=False),
    ]
    if result.error_count > limit:
        lines.append(f"... and {result.error_count - limit} more")
    return "\n".join(lines)
