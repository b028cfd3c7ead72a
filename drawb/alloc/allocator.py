"""``allocate`` and ``Allocator``: the scheduler's structured allocation of a pod's claims on a node."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from drawb.alloc.errors import AllocationError
from drawb.alloc.nodes import merge_requirements, node_name_selector
from drawb.alloc.index import SliceIndex, slice_index
from drawb.alloc.pools import counters_anywhere, gather_pools, random_pool_order
from drawb.alloc.precheck import Precheck
from drawb.alloc.requests import RequestData
from drawb.alloc.rules import Rules, rules_for
from drawb.alloc.search import DeviceResult, MaxSizeExceeded, Search
from drawb.alloc.selectors import evaluator_for
from drawb.alloc.state import AllocatedState, gather_allocated
from drawb.alloc.trace import Trace, trace
from drawb.alloc.validation import validate
from drawb.alloc.versions import Flavor, flavor as resolve_flavor
from drawb import versions

Obj = Mapping[str, Any]


def allocate(
    claims: Sequence[Obj],
    *,
    node: Obj | None,
    slices: Iterable[Obj],
    classes: Iterable[Obj],
    allocated: Iterable[Obj] = (),
    kubernetes_version: str = versions.DEFAULT,
    feature_gates: Mapping[str, bool] | None = None,
) -> list[dict] | None:
    """Allocate ``claims`` together on ``node`` as the scheduler of ``kubernetes_version`` does.

    Returns one ``status.allocation`` per claim, in order; None when they cannot all be allocated
    on this node; raises AllocationError with the scheduler's message for invalid input. Gates not
    named in ``feature_gates`` take the version's default; they pick the stable, incubating or
    experimental implementation as the scheduler does. Where Go's pool order is random (1.34,
    1.35, and the stable implementation), drawb tries pools sorted by driver and pool name.
    To try many nodes for the same claims, use ``Allocator``.
    """
    allocator = Allocator(claims, slices=slices, classes=classes, allocated=allocated,
                          kubernetes_version=kubernetes_version, feature_gates=feature_gates)  # fmt: skip
    return allocator.allocate(node)


class Allocator:
    """The allocation of one pod's claims, prepared once and tried node by node.

    ``Allocator(claims, slices=..., classes=..., allocated=..., kubernetes_version=..., feature_gates=...)``
    takes the arguments of ``allocate`` except ``node``; ``allocate(node)`` then answers exactly as
    ``allocate(claims, node=node, ...)`` would: one ``status.allocation`` per claim, None when the
    claims do not fit on that node, AllocationError with the scheduler's message. It does once
    what the scheduler's DynamicResources PreFilter does once per pod (gather the devices the
    ``allocated`` claims hold, resolve the version and gates, index the slices by node and pool)
    and, from the second node on, runs a cheap exact test (``drawb.alloc.precheck``) before each
    node's search that turns away a node with no free device for the first request's class.

    Use it to try many nodes for the same pod (the simulated scheduler, "why", "preview")::

        allocator = Allocator([claim], slices=slices, classes=classes, allocated=in_use)
        chosen = next((n for n in nodes if allocator.allocate(n) is not None), None)

    The objects are read, never modified; an allocator assumes they do not change while it is in
    use (make a new one after a claim, slice or class changes). Errors of the version or gates
    are raised here; everything else from ``allocate(node)``.
    """

    def __init__(self, claims: Sequence[Obj], *, slices: Iterable[Obj], classes: Iterable[Obj],
                 allocated: Iterable[Obj] = (), kubernetes_version: str = versions.DEFAULT,
                 feature_gates: Mapping[str, bool] | None = None) -> None:  # fmt: skip
        chosen = resolve_flavor(kubernetes_version, feature_gates)
        state = gather_allocated(allocated, dict(chosen.gates).get("DRAConsumableCapacity", False))
        self._prepare(chosen, claims, slices, classes, state)

    @classmethod
    def for_flavor(cls, flavor: Flavor, claims: Sequence[Obj], *, slices: Iterable[Obj], classes: Iterable[Obj],
                   state: AllocatedState) -> Allocator:  # fmt: skip
        """An allocator for one resolved Flavor and AllocatedState (the upstream tests drive this)."""
        allocator = cls.__new__(cls)
        allocator._prepare(flavor, claims, slices, classes, state)
        return allocator

    def _prepare(self, flavor: Flavor, claims: Sequence[Obj], slices: Iterable[Obj], classes: Iterable[Obj],
                 state: AllocatedState) -> None:  # fmt: skip
        self.flavor, self.state = flavor, state
        self.claims = list(claims)
        self.rules = rules_for(flavor)
        self.evaluator = evaluator_for(flavor.minor, flavor.gates)
        self.classes: dict[str, Obj] = {}
        for device_class in classes:
            self.classes.setdefault((device_class.get("metadata") or {}).get("name", ""), device_class)
        self._slices = slices if isinstance(slices, list) else list(slices)
        self._index: SliceIndex | None = None
        self._precheck: Precheck | None | bool = False  # False: not built yet
        self._first = True

    @property
    def index(self) -> SliceIndex:
        """The slices indexed by node and pool (built on first use)."""
        if self._index is None:
            self._index = slice_index(self._slices)
        return self._index

    def allocate(self, node: Obj | None) -> list[dict] | None:
        """The claims' allocations on ``node`` (None: they do not fit there; AllocationError)."""
        if self._first:  # searched directly: a single call (``allocate()``) pays nothing for the pre-check
            self._first = False
            return self.search(node)
        if self.rejects(node):
            return None
        return self.search(node)

    def rejects(self, node: Obj | None) -> bool:
        """Whether the pre-check alone turns ``node`` away (then ``allocate(node)`` is None)."""
        if self._precheck is False:
            self._precheck = Precheck.build(self.claims, self.classes, self.index, self.rules, self.state,
                                            self.evaluator)  # fmt: skip
        return self._precheck is not None and self._precheck.rejects(node)

    def search(self, node: Obj | None, stats: dict | None = None, reverse_random_order: bool = False) -> list[dict] | None:
        """The full allocation on ``node``, without the pre-check; ``stats["invocations"]`` receives
        the search's step count (``NumAllocateOneInvocations``); ``reverse_random_order`` tries
        pools in reverse where Go's order is random (to find results that depend on it)."""
        search = self._validated(node, reverse_random_order)
        try:
            done = search.allocate_one(0, 0, 0, 0, False)
        except MaxSizeExceeded:
            return None
        finally:
            if stats is not None:
                stats["invocations"] = search.invocations
        if not done:
            # 1.35+: "invalid resource pools were encountered" fails only this node (ErrFailedAllocationOnNode).
            return None
        node_name = ((node or {}).get("metadata") or {}).get("name", "")
        return [_allocation(search, i, claim, node_name) for i, claim in enumerate(search.claims)]


    def trace(self, node: Obj | None, every: bool = False) -> Trace:
        """The optional trace (``drawb.alloc.trace``): for every request, the stages at which the search
        turns each device visible on ``node`` away (the first only, or ``every`` stage's verdict);
        AllocationError where the claims are invalid. ``allocate`` never traces."""
        return trace(self._validated(node, False), every)

    def _validated(self, node: Obj | None, reverse_random_order: bool) -> Search:
        """A new search on ``node``, its claims validated."""
        flavor = self.flavor
        index = self.index
        pools = gather_pools(index.for_node(node, counters_anywhere(flavor)), node, flavor, index.pool)
        if reverse_random_order and random_pool_order(flavor):
            pools.reverse()
        search = Search(list(self.claims), node, pools, self.rules, self.state, self.evaluator)
        validate(search, self.classes)
        return search


def allocate_with(flavor: Flavor, claims: Sequence[Obj], *, node: Obj | None, slices: list[Obj],
                  classes: list[Obj], state: AllocatedState, stats: dict | None = None,
                  reverse_random_order: bool = False) -> list[dict] | None:  # fmt: skip
    """The full search of ``allocate`` for one resolved Flavor and AllocatedState (the upstream
    tests drive this; see ``Allocator.search`` for ``stats`` and ``reverse_random_order``)."""
    allocator = Allocator.for_flavor(flavor, claims, slices=slices, classes=classes, state=state)
    return allocator.search(node, stats, reverse_random_order)


def _allocation(search: Search, claim_i: int, claim: Obj, node_name: str) -> dict:
    rules = search.rules
    results = []
    for r in search.results[claim_i]:
        result: dict[str, Any] = {
            "request": r.request_name,
            "driver": r.candidate.id[0],
            "pool": r.candidate.id[1],
            "device": r.candidate.id[2],
        }
        if r.admin_access:
            result["adminAccess"] = True
        if rules.tolerations_in_results and r.tolerations:
            result["tolerations"] = [dict(t) for t in r.tolerations]
        if rules.binding_results:
            device = r.candidate.device
            if device.get("bindingConditions"):
                result["bindingConditions"] = list(device["bindingConditions"])
            if device.get("bindingFailureConditions"):
                result["bindingFailureConditions"] = list(device["bindingFailureConditions"])
        if r.share_id is not None:
            result["shareID"] = r.share_id
        if rules.node_operations and (r.candidate.slice.get("spec") or {}).get("skipNodeOperations"):
            result["skipNodeOperations"] = list(r.candidate.slice["spec"]["skipNodeOperations"])
        if r.consumed:
            result["consumedCapacity"] = {k: str(v) for k, v in r.consumed.items()}
        results.append(result)
    devices: dict[str, Any] = {"results": results}
    config = _config(search, claim_i, claim)
    if config:
        devices["config"] = config
    allocation: dict[str, Any] = {"devices": devices}
    selector = _node_selector(search.results[claim_i], rules, node_name, claim)
    if selector is not None:
        allocation["nodeSelector"] = selector
    return allocation


def _selected(search: Search, claim_i: int, request_i: int) -> RequestData:
    data = search.request_data[(claim_i, request_i, 0)]
    if data.parent is not None:
        data = search.request_data[(claim_i, request_i, data.selected_sub)]
    return data


def _config(search: Search, claim_i: int, claim: Obj) -> list[dict]:
    """Class configs once per class (in request order), then the claim's configs: until 1.36 a config
    naming several requests appears once per request it names; 1.37 adds it once and drops
    ``requests`` from any config that covers every request."""
    devices = (claim.get("spec") or {}).get("devices") or {}
    requests = devices.get("requests") or []
    config: list[dict] = []
    class_ranges: dict[str, tuple[int, int]] = {}
    for request_i in range(len(requests)):
        data = _selected(search, claim_i, request_i)
        device_class = data.device_class
        if device_class is None:
            continue
        class_name = (device_class.get("metadata") or {}).get("name", "")
        if class_name in class_ranges:
            start, end = class_ranges[class_name]
            for entry in config[start:end]:
                entry["requests"].append(data.name)
            continue
        start = len(config)
        for entry in (device_class.get("spec") or {}).get("config") or []:
            config.append({"source": "FromClass", "requests": [data.name], **_configuration(entry)})
        class_ranges[class_name] = (start, len(config))
    once = search.rules.config_once
    for entry in devices.get("config") or []:
        names = entry.get("requests") or []
        if not names:
            config.append({"source": "FromClaim", **_configuration(entry)})
            continue
        for request_i, request in enumerate(requests):
            if request.get("name") in names or (
                search.request_data[(claim_i, request_i, 0)].parent is not None
                and _selected(search, claim_i, request_i).name in names
            ):
                config.append({"source": "FromClaim", "requests": list(names), **_configuration(entry)})
                if once:
                    break
    if once:
        for entry in config:
            if entry.get("requests") and all(
                request.get("name") in entry["requests"] or _selected(search, claim_i, i).name in entry["requests"]
                for i, request in enumerate(requests)
            ):
                del entry["requests"]
    return config


def _configuration(entry: Obj) -> dict:
    """The DeviceConfiguration part of a class or claim config (``opaque``)."""
    return {k: v for k, v in entry.items() if k not in ("requests", "source")}


def _node_selector(results: list[DeviceResult], rules: Rules, node_name: str, claim: Obj) -> dict | None:
    """Where the allocation can be used (``createNodeSelector``); None means everywhere."""
    term: dict[str, list] = {"matchFields": [], "matchExpressions": []}
    for r in results:
        spec = r.candidate.slice.get("spec") or {}
        source = r.candidate.device if spec.get("perDeviceNodeSelection") else spec
        local = source.get("nodeName") is not None
        if local or (rules.target_node_selector and r.candidate.device.get("bindsToNode")):
            return node_name_selector(node_name if rules.target_node_selector else source.get("nodeName", ""))
        selector = source.get("nodeSelector")
        if selector is not None:
            terms = selector.get("nodeSelectorTerms") or []
            if len(terms) > 1:
                name = (claim.get("metadata") or {}).get("name", "")
                raise AllocationError(
                    f"create NodeSelector for claim {name}: unsupported ResourceSlice.NodeSelector with {len(terms)} terms"
                )
            if terms:
                merge_requirements(term["matchFields"], terms[0].get("matchFields") or [])
                merge_requirements(term["matchExpressions"], terms[0].get("matchExpressions") or [])
    if term["matchFields"] or term["matchExpressions"]:
        return {"nodeSelectorTerms": [{k: v for k, v in term.items() if v}]}
    return None
