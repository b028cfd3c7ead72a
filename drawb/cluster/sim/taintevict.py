"""kube-controller-manager's device taint eviction controller on the simulated store, and the API
server's ``timeAdded`` on DeviceTaintRules.

``due_evictions`` says, for every bound pod a NoExecute device taint reaches (from a ResourceSlice, or
from a DeviceTaintRule while the rules' gate is on), when it is to be deleted (``drawb.alloc.eviction``:
its allocation results' tolerations and their ``tolerationSeconds`` counted from the taint's
``timeAdded``). The lifecycle deletes each pod when its time comes, after marking it as the controller
does (condition DisruptionTarget, event DeviceTaintManagerEviction).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from drawb.alloc.eviction import claim_eviction, pods_of_claim
from drawb.alloc.taintrules import rule_hits, taint_of

DeviceID = tuple[str, str, str]
COMPONENT = "device-taint-eviction-controller"
REASON = "DeletionByDeviceTaintManager"
MESSAGE = "Device Taint manager: deleting due to NoExecute taint"


def stamp_time_added(rule: dict, existing: dict | None, now: str) -> None:
    """Set a DeviceTaintRule's ``spec.taint.timeAdded`` as the API server does: now when it is unset or
    when the effect changed without a new time given; else as given."""
    taint = (rule.get("spec") or {}).get("taint")
    if not isinstance(taint, dict):
        return
    old = ((existing or {}).get("spec") or {}).get("taint") or {}
    if not taint.get("timeAdded"):
        taint["timeAdded"] = old.get("timeAdded") if old and old.get("effect") == taint.get("effect") else now
    elif old and taint["timeAdded"] == old.get("timeAdded") and old.get("effect") != taint.get("effect"):
        taint["timeAdded"] = now


def has_noexecute(rs: Mapping[str, Any]) -> bool:
    """Whether a slice has a device with a NoExecute taint."""
    return any(t.get("effect") == "NoExecute" for d in (rs.get("spec") or {}).get("devices") or () for t in d.get("taints") or ())


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")


def seconds_of(timestamp: Callable[[float], str]) -> Callable[[Mapping[str, Any]], float | None]:
    """A taint's ``timeAdded`` in the clock's seconds (None when it has none)."""
    start = _parse(timestamp(0))

    def added(taint: Mapping[str, Any]) -> float | None:
        text = taint.get("timeAdded")
        if not text:
            return None
        try:
            return (_parse(str(text).replace(".000000Z", "Z")) - start).total_seconds()
        except ValueError:
            return None

    return added


def noexecute_taints(tainted: Iterable[Mapping[str, Any]], slices: Iterable[Mapping[str, Any]],
                     rules: Iterable[Mapping[str, Any]]) -> dict[DeviceID, list[dict]]:
    """Every device with a NoExecute taint, from its slice (among ``tainted``, the slices with such taints)
    or from a rule (over all ``slices``), with those taints."""
    found: dict[DeviceID, list[dict]] = {}
    for rs in tainted:
        spec = rs.get("spec") or {}
        for device in spec.get("devices") or ():
            for taint in device.get("taints") or ():
                if taint.get("effect") == "NoExecute":
                    found.setdefault((spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""),
                                      device.get("name", "")), []).append(dict(taint))
    evicting = [r for r in rules if taint_of(r).get("effect") == "NoExecute"]
    for rule, rs, device in rule_hits(slices if evicting else (), evicting):
        spec = rs.get("spec") or {}
        found.setdefault((spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""), device.get("name", "")),
                         []).append(taint_of(rule))
    return found


def due_evictions(taints: Mapping[DeviceID, list[dict]], claims: Iterable[Mapping[str, Any]],
                  pods_by_uid: Mapping[str, Mapping[str, Any]], added_at: Callable[[Mapping[str, Any]], float | None],
                  now: float) -> dict[tuple[str, str], tuple[float, str]]:
    """(namespace, pod) -> (when it is deleted, its uid) for every pod the taints evict."""
    if not taints:
        return {}
    due: dict[tuple[str, str], tuple[float, str]] = {}

    def at(taint: Mapping[str, Any]) -> float:
        added = added_at(taint)
        return now if added is None else added

    for claim in claims:
        eviction = claim_eviction(claim, lambda device: taints.get(device, ()), at)
        if eviction is None:
            continue
        when = at(eviction.taint) + eviction.delay
        for pod in pods_of_claim(claim, pods_by_uid):
            key = (pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
            if key not in due or when < due[key][0]:
                due[key] = (when, pod["metadata"].get("uid", ""))
    return due
