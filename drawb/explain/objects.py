"""The parts of a cluster's objects (plain JSON dicts) an explanation reads: metadata, names, allocations.

The objects themselves, and the scheduler's version and gates, are the scheduler's view
(``drawb.alloc.view.PlanState``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Obj = Mapping[str, Any]


def meta(obj: Obj) -> Mapping[str, Any]:
    """An object's metadata (empty when absent)."""
    return obj.get("metadata") or {}


def name_of(obj: Obj) -> str:
    return meta(obj).get("name", "")


def namespace_of(obj: Obj) -> str:
    return meta(obj).get("namespace", "")


def allocation_of(claim: Obj) -> Mapping[str, Any] | None:
    """A claim's ``status.allocation`` (None while unallocated)."""
    return (claim.get("status") or {}).get("allocation") or None


def results_of(claim: Obj) -> list[Mapping[str, Any]]:
    return list(((allocation_of(claim) or {}).get("devices") or {}).get("results") or [])
