"""What killed runs left behind: drawb's objects annotated with a process that no longer runs.

A check (and doctor's live probe) deletes what it created when it ends, after an error, a timeout or an
interrupt too; only a process killed outright (SIGKILL, a closed laptop, a crashed kernel) leaves its
pod, claim template and the claim made from it, which may hold a GPU. Objects of a run on another host
are never removed: nobody here can tell whether it still runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from drawb.check.manifests import RUN_LABEL
from drawb.cluster.owner import OWNER_ANNOTATION, still_running
from drawb.cluster.protocol import Cluster, ClusterError, is_managed

KINDS = ("Pod", "ResourceClaim", "ResourceClaimTemplate")  # in the order they are removed: pods release claims


@dataclass(frozen=True)
class Leftover:
    """One object of a run that no longer runs."""

    kind: str
    namespace: str
    name: str
    run: str  # the check's run id, else the process
    owner: str  # host/pid/start of the process that ran it

    @property
    def label(self) -> str:
        """``Kind/name``."""
        return f"{self.kind}/{self.name}"


def find_leftovers(cluster: Cluster, namespace: str | None = None) -> list[Leftover]:
    """The leftovers of dead runs in ``namespace`` (None: every namespace), pods first."""
    found = []
    for kind in KINDS:
        for obj in cluster.list(kind, namespace):
            meta = obj.get("metadata") or {}
            owner = (meta.get("annotations") or {}).get(OWNER_ANNOTATION)
            if owner and is_managed(obj) and still_running(owner) is False:
                run = (meta.get("labels") or {}).get(RUN_LABEL) or owner
                found.append(Leftover(kind, meta.get("namespace", ""), meta["name"], run, owner))
    return found


def remove(cluster: Cluster, leftovers: list[Leftover]) -> list[Leftover]:
    """Delete ``leftovers`` (pods first); those that were still there and are now gone."""
    removed = []
    for leftover in leftovers:
        try:
            cluster.delete(leftover.kind, leftover.name, leftover.namespace)
        except ClusterError as exc:
            if exc.status == 404:  # gone already: the claim of a deleted pod, collected with it
                continue
            raise
        removed.append(leftover)
    return removed
