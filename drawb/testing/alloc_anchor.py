"""Run the Go structured allocator (``testcluster/allocbench``) on scenario files.

``write_scenario`` writes what ``drawb.alloc.allocate`` takes (claims, node, slices, classes,
allocated claims) plus the allocator's feature set as one JSON file; ``run`` builds the anchor if
needed (``drawb.testing.build.build_anchor``: the same module graph as the control plane) and
returns its report per file: the verdict, the allocation results or error, and the median time of
one node's allocation in nanoseconds.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import orjson

from drawb.testing import build

# The allocator's gates and their defaults in Kubernetes 1.34 (pkg/features/kube_features.go:
# DRAAdminAccess and DRAPrioritizedList beta, DRAResourceClaimDeviceStatus beta; the rest alpha).
GATES_1_34 = {
    "DRAAdminAccess": True,
    "DRAConsumableCapacity": False,
    "DRADeviceBindingConditions": False,
    "DRADeviceTaints": False,
    "DRAPartitionableDevices": False,
    "DRAPrioritizedList": True,
    "DRAResourceClaimDeviceStatus": True,
}


def features(feature_gates: Mapping[str, bool] | None = None) -> dict[str, bool]:
    """The allocator's gates for 1.34 with ``feature_gates`` applied (other gates are ignored)."""
    return {**GATES_1_34, **{k: v for k, v in (feature_gates or {}).items() if k in GATES_1_34}}


def write_scenario(path: Path, *, claims: list[dict], node: dict | None, slices: Iterable[dict],
                   classes: Iterable[dict], allocated: Iterable[dict] = (),
                   feature_gates: Mapping[str, bool] | None = None) -> Path:
    """Write one scenario file for the anchor; returns ``path``."""
    document = {"claims": claims, "node": node, "slices": list(slices), "classes": list(classes),
                "allocated": list(allocated), "features": features(feature_gates)}
    Path(path).write_bytes(orjson.dumps(document))
    return Path(path)


def run(paths: list[Path], rounds: int = 5, min_time_ms: int = 200, binary: Path | None = None) -> list[dict]:
    """The anchor's report for each scenario file (``rounds=0``: verdicts only, no timing)."""
    binary = binary or build.build_anchor()
    proc = subprocess.run([str(binary), f"-rounds={rounds}", f"-min-time={min_time_ms}ms", *map(str, paths)],
                          capture_output=True, text=True, check=False)
    if proc.returncode:
        raise RuntimeError(f"{binary.name} failed ({proc.returncode}): {proc.stderr.strip()}")
    return [orjson.loads(line) for line in proc.stdout.splitlines() if line.strip()]
