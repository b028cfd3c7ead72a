"""Slice shapes the target changes: from the minor with ``api.counter_sets_in_own_slices`` (1.35) a slice holds
counter sets or devices, never both, and the API server refuses one that holds both."""

from __future__ import annotations

from drawb.gpu.releases import RELEASES
from drawb.upgrade.inputs import CLUSTER, Inputs
from drawb.upgrade.report import ERROR, Finding

BEHAVIOUR = "api.counter_sets_in_own_slices"


def _dynamic_mig() -> str:
    """The first NVIDIA driver release with dynamic MIG, whose counter sets follow the Kubernetes version."""
    return next(r.name for r in RELEASES.values() if "DynamicMIG" in r.features)


def slice_shapes(inputs: Inputs) -> list[Finding]:
    """A finding for every slice holding both ``sharedCounters`` and ``devices``, when the target is the first
    to refuse that."""
    if not inputs.crosses(BEHAVIOUR):
        return []
    found = []
    for item in inputs.of("ResourceSlice"):
        if not (item.spec.get("sharedCounters") and item.spec.get("devices")):
            continue
        if item.where == CLUSTER:
            fix = (f"before upgrading, move its driver ({item.spec.get('driver')}) to a release that publishes counter "
                   f"sets in slices of their own on the target (the NVIDIA driver does from {_dynamic_mig()}, with "
                   "DynamicMIG); the driver then republishes the pool")
        else:
            fix = ("move spec.sharedCounters into a ResourceSlice of its own in the same pool (same driver, pool and "
                   "node), keep the devices' consumesCounters, and count both slices in pool.resourceSliceCount")
        found.append(Finding(
            "slice-shape", ERROR, item.where, item.label, "spec",
            f"holds sharedCounters and devices in one slice; from Kubernetes {inputs.first_with(BEHAVIOUR)} counter sets live in "
            f"slices of their own, and the API server refuses it: \"only one of `sharedCounters` or `devices` is "
            f"allowed\" (devices may consume counters of any slice of their pool)", fix))
    return found

