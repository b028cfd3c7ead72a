"""DeviceTaintRules on devices, as kube-scheduler's slice tracker and kube-controller-manager apply them.

A rule's ``deviceSelector`` names a driver, a pool and a device, each optional: a device is selected
when every one given matches (an empty selector selects every device, a missing one none), and gets
the rule's taint added after its own (``with_rule_taints``). The gate that turns this on is
``rules.kind_gate("DeviceTaintRule")`` of the cluster's minor.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

DeviceID = tuple[str, str, str]  # driver, pool, device
Obj = Mapping[str, Any]


def selector_of(rule: Obj) -> Mapping[str, Any] | None:
    """The rule's device selector (None: it selects nothing)."""
    selector = (rule.get("spec") or {}).get("deviceSelector")
    return selector if isinstance(selector, Mapping) else None


def selects(rule: Obj, driver: str, pool: str, device: str) -> bool:
    """Whether ``rule`` selects the device ``driver/pool/device``."""
    selector = selector_of(rule)
    if selector is None:
        return False
    return all(selector.get(name) in (None, value)
               for name, value in (("driver", driver), ("pool", pool), ("device", device)))


def taint_of(rule: Obj) -> dict:
    """The taint a rule applies."""
    return dict((rule.get("spec") or {}).get("taint") or {})


def _selects_pool(selector: Mapping[str, Any], driver: str, pool: str) -> bool:
    return selector.get("driver") in (None, driver) and selector.get("pool") in (None, pool)


def rule_hits(slices: Iterable[Obj], rules: Sequence[Obj]) -> Iterator[tuple[Obj, Obj, Obj]]:
    """(rule, slice, device) for every device a rule selects, rule by rule in the given order."""
    slices = list(slices)
    for rule in rules:
        selector = selector_of(rule)
        if selector is None:
            continue
        for rs in slices:
            spec = rs.get("spec") or {}
            if not _selects_pool(selector, spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")):
                continue
            wanted = selector.get("device")
            for device in spec.get("devices") or ():
                if wanted is None or device.get("name") == wanted:
                    yield rule, rs, device


def with_rule_taints(slices: Sequence[Obj], rules: Sequence[Obj]) -> list[Obj]:
    """``slices`` with each rule's taint added to the devices it selects; a slice no rule touches is the
    same object, a touched one a copy (the given objects are never changed)."""
    if not rules:
        return list(slices)
    added: dict[int, dict[str, list[dict]]] = {}
    for rule, rs, device in rule_hits(slices, rules):
        added.setdefault(id(rs), {}).setdefault(device.get("name", ""), []).append(taint_of(rule))
    if not added:
        return list(slices)
    out = []
    for rs in slices:
        extra = added.get(id(rs))
        if extra is None:
            out.append(rs)
            continue
        spec = dict(rs["spec"])
        spec["devices"] = [
            {**d, "taints": [*(d.get("taints") or ()), *extra[d.get("name", "")]]} if d.get("name", "") in extra else d
            for d in spec.get("devices") or ()]
        out.append({**rs, "spec": spec})
    return out
