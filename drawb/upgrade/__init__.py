"""``upgrade-check``: the connected cluster and the user's manifests checked against a target Kubernetes minor.

It reads the cluster's slices, classes, claims, templates and roles, the DRA gates its API server reports and
the ``resource.k8s.io`` versions it serves, and finds what the upgrade changes or breaks, each with the fix:
slice shapes the target refuses (``shapes``), objects it reads differently (``meanings``), roles lacking the
claim-status subresources it authorizes (``access``), gates in use it locks or removes (``gates``), group
versions it does not serve (``served``), and selectors reading attributes the cluster's NVIDIA DRA driver
release does not publish (``attributes``). Every version fact comes from ``drawb.versions``; it writes nothing.
"""

from __future__ import annotations

from drawb import versions
from drawb.cluster.protocol import Cluster
from drawb.errors import UsageError
from drawb.gpu.releases import DriverRelease, detect, release
from drawb.render.sources import Source
from drawb.upgrade.access import status_writers
from drawb.upgrade.attributes import unpublished_reads
from drawb.upgrade.gates import gates_in_use
from drawb.upgrade.inputs import Inputs, cluster_gates, manifest_items, read_cluster
from drawb.upgrade.meanings import allocation_order, list_constraints
from drawb.upgrade.report import ERROR, KINDS, WARNING, Finding, UpgradeReport
from drawb.upgrade.served import group_versions
from drawb.upgrade.shapes import slice_shapes

__all__ = ["ERROR", "KINDS", "WARNING", "Finding", "UpgradeReport", "check", "check_upgrade"]

CHECKS = (slice_shapes, list_constraints, allocation_order, status_writers, gates_in_use, group_versions)


def check(inputs: Inputs, driver_release: str | None = None) -> tuple[list[Finding], DriverRelease | None, str]:
    """Every finding about ``inputs``, the NVIDIA driver release the attribute check used, and how it is known
    (``driver_release`` names it; else it is told from the slices)."""
    found = [finding for run in CHECKS for finding in run(inputs)]
    if driver_release is not None:
        chosen, told = release(driver_release), "as named"
    else:
        chosen = detect([item.obj for item in inputs.of("ResourceSlice")])
        told = "told from the slices"
    found += unpublished_reads(inputs, chosen, told)
    order = list(KINDS)
    found.sort(key=lambda f: (order.index(f.kind), f.where != "cluster", f.where, f.object, f.path))
    return found, chosen, told


def check_upgrade(cluster: Cluster, to: str, sources: list[Source] = (), driver_release: str | None = None) -> UpgradeReport:
    """Check ``cluster`` and the manifests of ``sources`` against Kubernetes ``to``."""
    server_version = cluster.server_version()
    current = versions.rules(server_version)
    target = versions.rules(to)
    if target.number < current.number:
        raise UsageError(f"Kubernetes {target.minor} is older than the cluster's {current.minor}: not an upgrade",
                         hint=f"name a minor from {current.minor} to {versions.newest()} with --to")
    items, unread = read_cluster(cluster)
    inputs = Inputs(current, target, server_version, items + manifest_items(list(sources)), cluster_gates(cluster),
                    cluster.group_versions("resource.k8s.io"))
    findings, chosen, told = check(inputs, driver_release)
    findings = [Finding("manifest", ERROR, p.document, "file", p.path, p.message, "fix the file and check again")
                for source in sources for p in source.problems] + findings
    notes = [f"{kind}s could not be read ({why}): they were not checked" for kind, why in unread.items()]
    if not inputs.gates:
        notes.append("the API server's feature gates could not be read: gates in use were not checked")
    return UpgradeReport(cluster.description, server_version, current.minor, target.minor, chosen, told,
                         [s.name for s in sources], findings, notes)
