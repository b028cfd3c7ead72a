"""Feature gates in use (set against the current minor's default, as the API server reports them) that the target
locks or no longer has: a component given a locked gate's other value, or a gate it lacks, does not start."""

from __future__ import annotations

from drawb.upgrade.inputs import Inputs
from drawb.upgrade.report import ERROR, WARNING, Finding


def _stage(stage: str) -> str:
    return "GA" if stage == "ga" else stage


def _value(on: bool) -> str:
    return "true" if on else "false"


def gates_in_use(inputs: Inputs) -> list[Finding]:
    """A finding for each DRA gate set on the cluster that the target locks or removes."""
    found = []
    for name, value in sorted(inputs.gates.items()):
        now = inputs.current.gates.get(name)
        if now is None or now.default == value:
            continue  # not a gate of this minor, or at its default: not set by hand
        where = ", ".join(now.components)
        later = inputs.target.gates.get(name)
        setting = f"--feature-gates={name}={_value(value)}"
        if later is None:
            found.append(Finding(
                "gate", ERROR, "cluster", "feature gates", name,
                f"{setting} is set ({now.stage} in {inputs.current.minor}); Kubernetes {inputs.target.minor} has no "
                f"gate {name}, and a component given it does not start",
                f"remove {name} from the feature gates of {where} when upgrading"))
        elif later.locked and later.default != value:
            found.append(Finding(
                "gate", ERROR, "cluster", "feature gates", name,
                f"{setting} is set; in Kubernetes {inputs.target.minor} {name} is {_stage(later.stage)} "
                f"and locked to {_value(later.default)}: a component given {_value(value)} does not start",
                f"remove {name} from the feature gates of {where}; what it turns {_value(value)} is "
                f"{_value(later.default)} from then on"))
        elif later.locked:
            found.append(Finding(
                "gate", WARNING, "cluster", "feature gates", name,
                f"{setting} is set; in Kubernetes {inputs.target.minor} it is locked to that value, and the gate is "
                "removed in a later release, when a component given it no longer starts",
                f"remove {name} from the feature gates of {where}"))
    return found
