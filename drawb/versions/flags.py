"""Reading a ``--feature-gates`` value as Kubernetes components read theirs: ``Name=true,Name=false``."""

from __future__ import annotations

from drawb.errors import DrawbError

# The spellings Go's strconv.ParseBool accepts, which is what a component's --feature-gates flag takes.
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


class MalformedFeatureGates(DrawbError, ValueError):
    """A feature-gates value that is not ``Name=true,Name=false``."""

    hint = "write Name=true or Name=false, comma-separated, e.g. DRAExtendedResource=true,DRADeviceTaints=true"


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``"DRAExtendedResource=true,DRADeviceTaints=false"`` -> ``{"DRAExtendedResource": True, ...}``
    (empty entries are skipped, a later entry wins); MalformedFeatureGates names the entry it cannot read."""
    gates: dict[str, bool] = {}
    for entry in str(text).split(","):
        if not entry.strip():
            continue
        name, equals, value = (part.strip() for part in entry.partition("="))
        if not name:
            raise MalformedFeatureGates(f"feature gate entry {entry.strip()!r} in {text!r} has no gate name")
        if not equals:
            raise MalformedFeatureGates(f"feature gate entry {entry.strip()!r} in {text!r} has no value: "
                                        f"write {name}=true or {name}=false")
        if value not in _TRUE + _FALSE:
            raise MalformedFeatureGates(f"feature gate {name}={value}: {value!r} is not true or false")
        gates[name] = value in _TRUE
    return gates
