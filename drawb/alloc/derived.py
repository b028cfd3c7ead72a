"""Derived attributes (DRADerivedAttributes, 1.37 alpha): a request names an attribute whose value
is a CEL expression over the device; constraints on that name read the computed value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drawb.alloc.errors import AllocationError
from drawb.cel.selector import evaluate_expression
from drawb.cel.values import CelError, SemverValue

_LIST_KEYS = {bool: "bools", int: "ints", str: "strings", SemverValue: "versions"}
_SCALAR_KEYS = {bool: "bool", int: "int", str: "string", SemverValue: "version"}


def _plain(value: Any) -> Any:
    return str(value.v) if isinstance(value, SemverValue) else value


def to_attribute(value: Any) -> dict[str, Any]:
    """A CEL value as a DeviceAttribute (``valToDeviceAttribute``)."""
    key = _SCALAR_KEYS.get(type(value))
    if key is not None:
        return {key: _plain(value)}
    if isinstance(value, (list, tuple)):
        if not value:
            return {"strings": []}
        kind = type(value[0])
        if kind not in _LIST_KEYS or any(type(v) is not kind for v in value):
            raise CelError(f"unsupported list element type {type(value[0]).__name__}")
        return {_LIST_KEYS[kind]: [_plain(v) for v in value]}
    raise CelError(f"unsupported derived attribute type {type(value).__name__}")


class DerivedAttributes:
    """Evaluates a request's derived attributes per device, once per expression and device."""

    def __init__(self, minor: int) -> None:
        self.version = f"1.{minor}"
        self.cache: dict[tuple, dict[str, Any]] = {}

    def lookup(self, derived: Mapping[str, str], name: str, device: Mapping[str, Any], device_id: tuple[str, str, str]):
        """(name, attribute) when ``name`` is derived by the request, else None."""
        expression = derived.get(name)
        if expression is None:
            return None
        key = (device_id, expression)
        found = self.cache.get(key)
        if found is None:
            try:
                value = evaluate_expression(expression, kubernetes_version=self.version, stored=True,
                                            device=device, driver=device_id[0])  # fmt: skip
                found = to_attribute(value)
            except CelError as err:
                raise AllocationError(
                    f"evaluate derived attribute {name} on device {'/'.join(device_id)} failed: {err.message}"
                ) from None
            except Exception as err:  # a compile error from the checker
                raise AllocationError(f"compile derived attribute {name} failed: {err}") from None
            self.cache[key] = found
        return name, found
