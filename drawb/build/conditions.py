"""One condition on a device, and the CEL a person would write for it.

>>> Condition("memory", "40Gi").cel()
'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from drawb.api.quantity import Quantity, QuantityError
from drawb.api.semver import Semver, SemverError
from drawb.errors import DrawbError

DRIVER = "gpu.nvidia.com"


class BuildError(DrawbError):
    """A part of the claim being built is not valid (a condition's value, a name, a count)."""

    title = "InvalidClaim"


@dataclass(frozen=True)
class Kind:
    """A kind of condition: what it reads (an attribute or a capacity of the NVIDIA driver), how it compares."""

    label: str
    field: str | None  # the attribute or capacity name under gpu.nvidia.com; None for raw CEL
    value_type: str  # string, quantity, version or cel
    capacity: bool = False

    @property
    def column(self) -> str | None:
        """The device frame's column of the values present (``gpu.nvidia.com/productName``)."""
        if self.field is None:
            return None
        return f"capacity:{DRIVER}/{self.field}" if self.capacity else f"{DRIVER}/{self.field}"


CONDITION_KINDS: dict[str, Kind] = {
    "product": Kind("product", "productName", "string"),
    "memory": Kind("memory at least", "memory", "quantity", capacity=True),
    "mig_profile": Kind("MIG profile", "profile", "string"),
    "compute_capability": Kind("compute capability at least", "cudaComputeCapability", "version"),
    "architecture": Kind("architecture", "architecture", "string"),
    "driver_version": Kind("driver version at least", "driverVersion", "version"),
    "cel": Kind("CEL", None, "cel"),
}

# Comparisons of quantities and versions, as the CEL libraries write them.
OPERATORS = {
    "at least": ".compareTo({v}) >= 0",
    "at most": ".compareTo({v}) <= 0",
    "more than": ".isGreaterThan({v})",
    "less than": ".isLessThan({v})",
}
STRING_OPERATORS = {"is": " == {v}", "is not": " != {v}"}


def cel_string(text: str) -> str:
    """``text`` as a double-quoted CEL string literal (JSON's escapes are CEL escapes)."""
    return json.dumps(text, ensure_ascii=False)


def normalize_version(text: str) -> str:
    """A version as the semver library accepts it: ``8.0`` and ``9`` become ``8.0.0`` and ``9.0.0``."""
    text = text.strip().lstrip("v")
    if re.fullmatch(r"\d+(\.\d+)?", text):
        text += ".0" * (2 - text.count("."))
    try:
        Semver.parse(text)
    except SemverError as exc:
        raise BuildError(f"{text!r} is not a version: {exc}", hint="write it as MAJOR.MINOR.PATCH, e.g. 550.54.15") from None
    return text


def check_quantity(text: str) -> str:
    """``text`` if it is a Kubernetes quantity (``40Gi``), else a BuildError."""
    text = text.strip().replace(" ", "")
    try:
        Quantity.parse(text)
    except QuantityError as exc:
        raise BuildError(f"{text!r} is not a quantity: {exc}", hint="e.g. 40Gi, 80Gi or 24000Mi") from None
    return text


@dataclass(frozen=True)
class Condition:
    """One condition of a request: ``kind`` (a key of CONDITION_KINDS), its ``value``, and ``op`` for
    memory and versions (a key of OPERATORS) or strings (``is`` / ``is not``). Values are checked on creation."""

    kind: str
    value: str
    op: str = ""

    def __post_init__(self) -> None:
        if self.kind not in CONDITION_KINDS:
            raise BuildError(f"unknown condition kind {self.kind!r}", hint=f"kinds: {', '.join(CONDITION_KINDS)}")
        spec = CONDITION_KINDS[self.kind]
        value = str(self.value)
        if spec.value_type == "quantity":
            value = check_quantity(value)
        elif spec.value_type == "version":
            value = normalize_version(value)
        elif spec.value_type == "cel":
            value = value.strip()
        if not value:
            raise BuildError(f"the {spec.label} condition has no value", hint="choose or type a value")
        object.__setattr__(self, "value", value)
        ops = STRING_OPERATORS if spec.value_type == "string" else OPERATORS if spec.field else {"": ""}
        op = self.op or next(iter(ops))
        if op not in ops:
            raise BuildError(f"{spec.label}: no comparison {op!r}", hint=f"use one of: {', '.join(ops)}")
        object.__setattr__(self, "op", op)

    @property
    def spec(self) -> Kind:
        """What kind of condition this is."""
        return CONDITION_KINDS[self.kind]

    def cel(self) -> str:
        """The CEL expression a person would write for this condition."""
        spec = self.spec
        if spec.field is None:
            return self.value
        where = "capacity" if spec.capacity else "attributes"
        subject = f'device.{where}["{DRIVER}"].{spec.field}'
        if spec.value_type == "string":
            return subject + STRING_OPERATORS[self.op].format(v=cel_string(self.value))
        literal = f'quantity("{self.value}")' if spec.value_type == "quantity" else f'semver("{self.value}")'
        return subject + OPERATORS[self.op].format(v=literal)


def joined(conditions: list[Condition]) -> str:
    """The conditions as one selector (``a && b``); raw CEL in parentheses when it is not alone."""
    parts = [c.cel() for c in conditions]
    if len(parts) > 1:
        parts = [f"({p})" if c.kind == "cel" else p for c, p in zip(conditions, parts)]
    return " && ".join(parts)
