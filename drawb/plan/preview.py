"""Preview: on which nodes a workload's claims fit now, and the devices each node would give them.

Nodes are tried as the simulated scheduler tries them, through ``drawb.alloc.verdicts``: in name
order, through NodeUnschedulable, TaintToleration, NodeAffinity and NodeResourcesFit for extended
resources (a ``ResourceFit``: a pod may ask for ``nvidia.com/gpu`` from a device plugin, with or
without claims), then DynamicResources (claims
the pod already has must be available on the node; the others are allocated by ``drawb.alloc``
with the devices already in use counted), nodes of the same signature (``PlanState.signature``)
allocated once. The first node that fits is the one the simulated scheduler picks; the real
scheduler scores every node that fits and may pick another of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drawb.alloc import AllocationError
from drawb.alloc.extended import extended_claim
from drawb.alloc.verdicts import verdicts
from drawb.alloc.view import NodeView, PlanState, pool_of, rename, results
from drawb.api.resourcefit import ResourceFit, counted_reasons
from drawb.memo import Table
from drawb.plan.workload import Workload


@dataclass
class NodeFit:
    """A node where the claims fit, and their allocations there (one per claim allocated): made on
    ``source``, a node of the same signature, and renamed on first use."""

    node: str
    view: NodeView | None = field(default=None, repr=False)
    source: NodeView | None = field(default=None, repr=False)
    made: list[dict] = field(default_factory=list, repr=False)
    _allocations: list[dict] | None = field(default=None, repr=False)

    @property
    def allocations(self) -> list[dict]:
        if self._allocations is None:
            same = self.source is None or self.source is self.view
            self._allocations = self.made if same else rename(self.made, self.source, self.view)
        return self._allocations


@dataclass
class Preview:
    """Where a workload fits now."""

    workload: Workload
    allocating: list[dict]  # the claims an attempt allocates (the others are allocated already)
    fits: list[NodeFit] = field(default_factory=list)
    rejected: dict[str, int] = field(default_factory=dict)  # the scheduler's reason -> nodes
    node_count: int = 0
    error: str | None = None  # the allocator's error: the scheduler would fail the attempt

    @property
    def pick(self) -> str | None:
        """The node the simulated scheduler would pick (the first that fits, in name order)."""
        return self.fits[0].node if self.fits else None


def _allocated_claims(workload: Workload) -> list[dict]:
    return [c for c in workload.claims if results(c) or (c.get("status") or {}).get("allocation")]


def try_nodes(workload: Workload, state: PlanState, claims: list[dict], *, stop_at_first: bool = False,
              fit: ResourceFit | None = None) -> Preview:
    """Try every node for ``claims`` (the rest of the workload's claims must be allocated already) and the
    extended resources ``fit`` checks (None: the pod asks for none), with the claim the scheduler makes for those
    a DeviceClass serves where a node leaves them to DRA."""
    held = [c for c in workload.claims if c not in claims and (c.get("status") or {}).get("allocation")]
    result = Preview(workload, claims, node_count=len(state.nodes))
    extended = extended_claim(workload.pod, state.classes, state.kubernetes_version, state.feature_gates) if fit else None
    try:
        for verdict in verdicts(state, workload.pod, claims, held, fit, extended):
            if verdict.reason is not None:
                for reason in counted_reasons(verdict.reason, verdict.node, fit):
                    result.rejected[reason] = result.rejected.get(reason, 0) + 1
                continue
            view = verdict.view
            result.fits.append(NodeFit(view.name, view, verdict.source if claims else None, verdict.allocations))
            if stop_at_first:
                break
    except AllocationError as err:
        result.error = str(err)
        result.fits = []
    return result


def preview(workload: Workload, state: PlanState, fit: ResourceFit | None = None) -> Preview:
    """Where ``workload`` fits now (see the module); ``fit``: its pod's extended resources to check."""
    return _preview(workload, state, fit)


def _preview(workload: Workload, state: PlanState, fit: ResourceFit | None) -> Preview:
    allocating = [c for c in workload.claims if c not in _allocated_claims(workload)]
    if workload.bound_node:  # nothing to place: show what its claims hold
        bound = [n for n in state.nodes if n["metadata"]["name"] == workload.bound_node]
        view = state.view(bound[0]) if bound else None
        held = [c for c in workload.claims if (c.get("status") or {}).get("allocation")]
        done = Preview(workload, held, node_count=len(state.nodes))
        done.fits = [NodeFit(workload.bound_node, view, made=[c["status"]["allocation"] for c in held])]
        return done
    return try_nodes(workload, state, allocating, fit=fit)


# --- what a device is, for people -----------------------------------------------------------


def _attribute(device: Mapping[str, Any], driver: str, name: str) -> Any:
    attributes = device.get("attributes") or {}
    value = attributes.get(name, attributes.get(f"{driver}/{name}"))
    if isinstance(value, Mapping):
        return next(iter(value.values()), None)
    return value


def describe(device: Mapping[str, Any] | None, driver: str) -> dict[str, Any]:
    """product, memory and profile of a published device (None where it has none)."""
    if device is None:
        return {"product": None, "memory": None, "profile": None}
    capacity = device.get("capacity") or {}
    memory = capacity.get("memory", capacity.get(f"{driver}/memory"))
    return {
        "product": _attribute(device, driver, "productName"),
        "memory": (memory or {}).get("value") if isinstance(memory, Mapping) else memory,
        "profile": _attribute(device, driver, "profile"),
    }


_NO_DEVICE = describe(None, "")
# per slice: its devices by name (the first of each name) and the descriptions made of them
_described: Table[tuple[dict[str, Mapping[str, Any]], dict[str, dict[str, Any]]]] = Table("devices described", 200_000)
# per view: the descriptions of its devices by (driver, pool, name); about three clusters' views (they hold
# their slices and claims)
_about_by_view: Table[dict[tuple[str, str, str], dict[str, Any]]] = Table("devices described per node", 30_000)


def _about(view: NodeView, driver: str, pool: str, name: str) -> dict[str, Any]:
    """``describe`` of a device of the view's slices (the first of that name in slice order),
    remembered per view (a view is kept while its node, slices and claims are the same objects)."""
    about_view = _about_by_view.get(view)
    if about_view is None:
        about_view = _about_by_view.put(view, {})
    key = (driver, pool, name)
    about = about_view.get(key)
    if about is None:
        about = about_view[key] = _about_in_slices(view, driver, pool, name)
    return about


def _about_in_slices(view: NodeView, driver: str, pool: str, name: str) -> dict[str, Any]:
    """``_about``, looked up: each slice's devices by name and their descriptions are remembered per
    slice object (a cluster's objects are replaced whole)."""
    for rs in view.slices:
        if pool_of(rs) != (driver, pool):
            continue
        cached = _described.get(rs)
        if cached is None:
            by_name: dict[str, Mapping[str, Any]] = {}
            for device in (rs.get("spec") or {}).get("devices") or []:
                by_name.setdefault(device.get("name", ""), device)
            cached = _described.put(rs, (by_name, {}))
        about = cached[1].get(name)
        if about is not None:
            return about
        device = cached[0].get(name)
        if device is not None:
            about = cached[1][name] = describe(device, driver)
            return about
    return _NO_DEVICE


def rows(fits: list[NodeFit], claims: list[dict], pick: str | None) -> dict[str, list]:
    """The table's columns, one row per device per node: node, claim, request, device, product, memory,
    profile, pick, driver, pool. A node's devices are its allocations made on a node alike to it, with
    that node's pools renamed (``rename`` does the same for the whole allocation)."""
    columns: dict[str, list] = {k: [] for k in ("node", "claim", "request", "device", "product", "memory", "profile",
                                                "pick", "driver", "pool")}
    nodes, claim_names, requests, devices = columns["node"], columns["claim"], columns["request"], columns["device"]
    products, memories, profiles = columns["product"], columns["memory"], columns["profile"]
    picks, drivers, pool_names = columns["pick"], columns["driver"], columns["pool"]
    names = [claim["metadata"]["name"] for claim in claims]
    for fit in fits:
        view = fit.view
        pools = {} if fit.source is None or fit.source is view or view is None else {
            pool[1]: renamed[1] for pool, renamed in zip(fit.source.pools, view.pools)}
        made = fit.made
        if fit._allocations is not None:  # renamed already
            made, pools = fit._allocations, {}
        for name, allocation in zip(names, made):
            for r in ((allocation.get("devices") or {}).get("results") or []):
                driver, device_name = r["driver"], r["device"]
                pool = pools.get(r["pool"], r["pool"])
                about = _about(view, driver, pool, device_name) if view else _NO_DEVICE
                nodes.append(fit.node)
                claim_names.append(name)
                requests.append(r["request"])
                devices.append(device_name)
                products.append(about["product"])
                memories.append(about["memory"])
                profiles.append(about["profile"])
                picks.append(fit.node == pick)
                drivers.append(driver)
                pool_names.append(pool)
    return columns
