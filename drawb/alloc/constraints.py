"""Claim constraints: ``matchAttribute`` (same value on every device) and ``distinctAttribute``
(different values), checked as each device is tentatively added during the search.

Version differences, as the scheduler has them:
- distinctAttribute keeps one attribute per request name until 1.36 (a later device of the same
  request replaces the earlier one; removing a device forgets its request's entry); 1.37 keeps a stack.
- 1.34 compares distinct attributes by *pointer*: only the same device (a shared one) clashes.
- With DRAListTypeAttributes (experimental 1.36+), values are sets: matchAttribute needs an element
  common to all devices, distinctAttribute pairwise disjoint sets. 1.36 narrows the common set as
  devices are added and does not widen it on backtracking (until the set is empty again); 1.37
  restores it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DeviceID = tuple[str, str, str]
_SCALARS = ("string", "int", "bool", "version")
_LISTS = (("ints", "int"), ("bools", "bool"), ("strings", "string"), ("versions", "version"))


def lookup_attribute(device: Mapping[str, Any], device_id: DeviceID, name: str) -> tuple[str, Mapping[str, Any]] | None:
    """The attribute by its full name, or by its short name when the domain is the driver's: (key, value)."""
    attributes = device.get("attributes") or {}
    if name in attributes:
        return name, attributes[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != device_id[0]:
        return None
    if ident in attributes:
        return ident, attributes[ident]
    return None


def scalar(attribute: Mapping[str, Any]) -> tuple[str, Any] | None:
    """(type, value) of a single-valued attribute; None for a list or no value."""
    for kind in _SCALARS:
        if attribute.get(kind) is not None:
            return kind, attribute[kind]
    return None


def as_set(attribute: Mapping[str, Any]) -> tuple[str, frozenset] | None:
    """(element type, values) with list-type semantics (``attributeAsSet``): a scalar is a
    one-element set; an empty list is no value."""
    for key, kind in _LISTS:
        if attribute.get(key):
            return kind, frozenset(attribute[key])
    one = scalar(attribute)
    if one is not None:
        return one[0], frozenset([one[1]])
    return None


def _intersects(a: tuple[str, frozenset], b: tuple[str, frozenset]) -> bool:
    return a[0] == b[0] and bool(a[1] & b[1])


class _Constraint:
    def __init__(self, requests: list[str] | None, attribute: str, rules: Any) -> None:
        self.requests = frozenset(requests or ())
        self.attribute = attribute
        self.rules = rules
        self.count = 0
        self.derived: Any = None  # (DerivedAttributes, the current request's derived map), set by the search

    def lookup(self, device: Mapping[str, Any], device_id: DeviceID):
        if self.derived is not None and self.derived[1]:
            found = self.derived[0].lookup(self.derived[1], self.attribute, device, device_id)
            if found is not None:
                return found
        return lookup_attribute(device, device_id, self.attribute)

    def applies(self, request: str, subrequest: str) -> bool:
        if not self.requests:
            return True
        if request in self.requests:
            return True
        return bool(subrequest) and f"{request}/{subrequest}" in self.requests


class MatchAttribute(_Constraint):
    """All devices carry the attribute with the same type and value."""

    def __init__(self, requests: list[str] | None, attribute: str, rules: Any) -> None:
        super().__init__(requests, attribute, rules)
        self.value: Any = None
        self.stack: list[tuple[str, frozenset]] = []

    def add(self, request: str, subrequest: str, device: Mapping[str, Any], device_id: DeviceID) -> bool:
        if not self.applies(request, subrequest):
            return True
        found = self.lookup(device, device_id)
        if found is None:
            return False
        if self.rules.list_attributes:
            return self._add_set(as_set(found[1]))
        value = scalar(found[1])
        if self.count == 0:
            self.value = value
            self.count = 1
            return True
        if value is None or value != self.value:
            return False
        self.count += 1
        return True

    def _add_set(self, values: tuple[str, frozenset] | None) -> bool:
        if values is None:
            return False
        if self.count == 0:
            self.stack = [values]
            self.count = 1
            return True
        common = self.stack[-1]
        if not _intersects(common, values):
            return False
        narrowed = (common[0], common[1] & values[1])
        if self.rules.match_restores_intersection:
            self.stack.append(narrowed)
        else:
            self.stack[-1] = narrowed
        self.count += 1
        return True

    def remove(self, request: str, subrequest: str, device: Mapping[str, Any], device_id: DeviceID) -> None:
        if not self.applies(request, subrequest):
            return
        self.count -= 1
        if self.rules.list_attributes and self.rules.match_restores_intersection:
            del self.stack[self.count :]


class DistinctAttribute(_Constraint):
    """Every device's attribute value differs from the others' (see the module docstring)."""

    def __init__(self, requests: list[str] | None, attribute: str, rules: Any) -> None:
        super().__init__(requests, attribute, rules)
        self.by_request: dict[str, tuple[Mapping[str, Any], Any]] = {}
        self.stack: list[tuple[Mapping[str, Any], Any]] = []

    def _entries(self):
        return self.stack if self.rules.distinct_stack else self.by_request.values()

    def add(self, request: str, subrequest: str, device: Mapping[str, Any], device_id: DeviceID) -> bool:
        if not self.applies(request, subrequest):
            return True
        found = self.lookup(device, device_id)
        if found is None:
            return False
        entry = (found[1], (device_id, found[0]))
        if self.count > 0 and not self._distinct(entry):
            return False
        if self.rules.distinct_stack:
            self.stack.append(entry)
        else:
            self.by_request[request] = entry
        self.count += 1
        return True

    def _distinct(self, entry: tuple[Mapping[str, Any], Any]) -> bool:
        attribute, identity = entry
        if self.rules.list_attributes:
            values = as_set(attribute)
            if values is None:
                return False
            for other, _ in self._entries():
                other_values = as_set(other)
                if other_values is not None and _intersects(values, other_values):
                    return False
            return True
        value = scalar(attribute)
        for other, other_identity in self._entries():
            if value is None:
                return False
            other_value = scalar(other)
            if other_value is None or other_value[0] != value[0]:
                continue
            if self.rules.distinct_by_pointer:
                if other_identity == identity:
                    return False
            elif other_value[1] == value[1]:
                return False
        return True

    def remove(self, request: str, subrequest: str, device: Mapping[str, Any], device_id: DeviceID) -> None:
        if not self.applies(request, subrequest):
            return
        if self.rules.distinct_stack:
            self.stack.pop()
        else:
            self.by_request.pop(request, None)
        self.count -= 1
