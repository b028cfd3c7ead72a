"""Counter compatibility groups (DRADeviceCompatibilityGroups, 1.37 alpha): devices drawing from
the same counter set may be allocated together only while their declared groups intersect (a
device without groups goes only with others without groups)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


class Intersection:
    """The running intersection of the groups of the devices drawing from one counter set."""

    __slots__ = ("members", "all_empty", "groups")

    def __init__(self, members: bool = False, all_empty: bool = False, groups: frozenset[str] = frozenset()):
        self.members, self.all_empty, self.groups = members, all_empty, groups

    def admits(self, groups: frozenset[str]) -> bool:
        if not self.members:
            return True
        if not groups:
            return self.all_empty
        if self.all_empty:
            return False
        return bool(self.groups & groups)

    def add(self, groups: frozenset[str]) -> Intersection:
        if not self.members:
            return Intersection(True, not groups, groups)
        if self.all_empty or not groups:
            return self
        return Intersection(True, False, self.groups & groups)


def _groups(consumption: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(consumption.get("compatibilityGroups") or ())


class CompatibilityBook:
    """Per pool and counter set: the groups of allocated devices (baseline) and of this attempt."""

    def __init__(self, is_allocated: Callable[[tuple[str, str, str]], bool]) -> None:
        self.is_allocated = is_allocated
        self.baseline: dict[tuple[str, str], dict[str, Intersection]] = {}
        self.running: dict[tuple[str, str], dict[str, Intersection]] = {}

    def _baseline(self, pool: Any) -> dict[str, Intersection]:
        key = (pool.driver, pool.name)
        found = self.baseline.get(key)
        if found is not None:
            return found
        baseline: dict[str, Intersection] = {}
        for slice_ in [*pool.slices, *pool.other_slices]:
            spec = slice_.get("spec") or {}
            driver, pool_name = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
            for device in spec.get("devices") or []:
                if not self.is_allocated((driver, pool_name, device.get("name", ""))):
                    continue
                for consumption in device.get("consumesCounters") or []:
                    name = consumption.get("counterSet", "")
                    baseline[name] = baseline.get(name, Intersection()).add(_groups(consumption))
        self.baseline[key] = baseline
        return baseline

    def take(self, device: Mapping[str, Any], pool: Any) -> Callable[[], None] | None:
        """Add the device's groups; None when some counter set does not admit them, else the undo."""
        running = self.running.setdefault((pool.driver, pool.name), {})
        baseline = self._baseline(pool)
        saved: list[tuple[str, Intersection | None]] = []

        def undo() -> None:
            for name, previous in reversed(saved):
                if previous is None:
                    running.pop(name, None)
                else:
                    running[name] = previous

        for consumption in device.get("consumesCounters") or []:
            name = consumption.get("counterSet", "")
            existed = name in running
            current = running[name] if existed else baseline.get(name, Intersection())
            groups = _groups(consumption)
            if not current.admits(groups):
                undo()
                return None
            saved.append((name, current if existed else None))
            running[name] = current.add(groups)
        return undo
