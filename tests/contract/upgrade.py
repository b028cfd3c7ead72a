"""The upgrade-check contract: tests/data/upgrade's manifests plant one problem per kind of finding for a cluster
of Kubernetes 1.34 checked against 1.37 (each document says what it plants), and the clean ones none.
tests/unit/upgrade checks them on the simulated cluster, tests/live on the local control plane."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parents[1] / "data" / "upgrade"
PLANTED, CLEAN = str(DATA / "planted.yaml"), str(DATA / "clean.yaml")

# (kind, level, object) of each finding PLANTED plants
PLANTED_FINDINGS = frozenset({
    ("slice-shape", "error", "ResourceSlice dgx-h100-02-counters-and-devices"),
    ("meaning", "warning", "ResourceClaimTemplate gpu-test/same-numa"),
    ("meaning", "warning", "Node dgx-h100-02"),
    ("rbac", "error", "ClusterRole my-scheduler"),
    ("rbac", "error", "ClusterRole my-network-driver"),
    ("served", "error", "ResourceClaim gpu-test/old-api"),
    ("attribute", "error", "ResourceClaimTemplate gpu-test/by-index"),
})


def found(report) -> set[tuple[str, str, str]]:
    """(kind, level, object) of each finding of an upgrade-check report."""
    return {(f.kind, f.level, f.object) for f in report.findings}
