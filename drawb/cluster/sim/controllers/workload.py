"""What the apps/v1 workload controllers (Deployment, ReplicaSet, StatefulSet, DaemonSet) share: a change of
the workload or of what it controls wakes the workload, which is synced while it is stored; pods named after
their workload; a status written back only when it changed."""

from __future__ import annotations

from collections.abc import Iterable

from drawb.cluster.sim.controllers.api import ControllerApi
from drawb.cluster.sim.controllers.index import NsKey, ObjectIndex
from drawb.cluster.sim.controllers.owners import generated_name
from drawb.cluster.sim.serviceaccounts import template_account
from drawb.cluster.sim.tree import copy_tree


class WorkloadController:
    """The controller of the workloads of kind ``KIND``: ``reconcile`` does one pass over one of them."""

    KIND = ""

    def wake(self, kind: str, obj: dict, deleted: bool, index: ObjectIndex) -> Iterable[NsKey]:
        """The workload itself (not once deleted: the garbage collector takes over), the one controlling ``obj``,
        or, for a new ServiceAccount, the workloads whose pods run as it (a pod refused for want of it can be
        created now)."""
        if kind == self.KIND:
            return [] if deleted else [(obj["metadata"].get("namespace") or "", obj["metadata"]["name"])]
        if kind == "ServiceAccount":
            return [] if deleted else users_of_account(index.by_kind[self.KIND], obj)
        return index.owners_of(self.KIND, obj)

    def sync(self, api: ControllerApi, item: NsKey) -> None:
        """Reconcile the workload at key ``item`` if it is still stored."""
        workload = api.index.get(self.KIND, item)
        if workload is not None:
            self.reconcile(api, item, workload)

    def reconcile(self, api: ControllerApi, item: NsKey, workload: dict) -> None:
        """One pass over ``workload``, stored at key ``item``."""
        raise NotImplementedError


def unused_pod_name(api: ControllerApi, owner: dict, made: dict[str, int], salt: str) -> str:
    """``<owner>-<5 characters>``, a name no pod of ``owner``'s namespace has; ``made`` counts the names drawn
    for each owner uid (the characters depend on the count, and on ``salt``)."""
    meta = owner["metadata"]
    while True:
        count = made[meta.get("uid", "")] = made.get(meta.get("uid", ""), 0) + 1
        name = generated_name(meta["name"] + "-", salt, meta.get("namespace"), meta["name"], meta.get("uid"), count)
        if api.index.get("Pod", (meta.get("namespace") or "", name)) is None:
            return name


def write_status(api: ControllerApi, workload: dict, status: dict) -> None:
    """Store a copy of ``workload`` with ``status``, unless that is its status already."""
    if status != (workload.get("status") or {}):
        draft = copy_tree(workload)
        draft["status"] = status
        api.store(draft)


def users_of_account(workloads: dict[NsKey, dict], account: dict) -> list[NsKey]:
    """The keys of ``workloads`` in ``account``'s namespace whose pod template runs as ``account``."""
    namespace, name = account["metadata"].get("namespace") or "", account["metadata"]["name"]
    return [key for key, workload in workloads.items()
            if key[0] == namespace and template_account(workload.get("spec") or {}) == name]
