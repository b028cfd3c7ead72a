"""A cheap test, before the search, that a node has no free device for the pod's first request.

The search takes claims, then requests, in order. Let R be the first request that needs devices
(the requests before it ask for none). The search's first step for R tries every device of the
node's pools: a device already allocated is passed over without looking at it, and for a free one
the class selectors come first (a device with binding conditions is not selectable when binding
is off). So when no free device visible on the node passes R's class selectors (for each
subrequest of a ``firstAvailable`` R), the search ends at R's first device having evaluated only
those selectors: the answer is "does not fit here" (None), never an allocation and never an error.

The test is used only where that argument holds, decided once per pod: the claims validate (the
validation of ``ExactCount`` requests does not depend on the node); no request anywhere uses
``All`` (validated against the node's pools); R is not admin access (which may take allocated
devices); no slice without a node name has a node selector that cannot be parsed (the pool
gathering would raise). For 1.34, whose search raises on reaching an invalid pool, a node whose
visible slices could form one (two slices of a pool, or a duplicate device name) is not tested.
Evaluating a class selector that fails also leaves the node to the full allocator. The test errs
only towards running the allocator: it never turns away a node the allocator would accept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drawb.alloc.errors import AllocationError
from drawb.alloc.index import SliceIndex
from drawb.alloc.pools import slice_matches
from drawb.alloc.requests import ALL, RequestData
from drawb.alloc.rules import Rules
from drawb.alloc.search import Search
from drawb.alloc.selectors import SelectorEvaluator
from drawb.alloc.slices import Candidate, SliceInfo, info
from drawb.alloc.state import AllocatedState
from drawb.alloc.validation import validate
from drawb.api.nodeaffinity import NodeSelectorError, compile_node_selector

Obj = Mapping[str, Any]


class Precheck:
    """Whether a node surely cannot hold the pod's first request (see the module docstring)."""

    def __init__(self, alternatives: list[RequestData], index: SliceIndex, rules: Rules, state: AllocatedState,
                 evaluator: SelectorEvaluator) -> None:  # fmt: skip
        self.alternatives = alternatives
        self.index = index
        self.rules = rules
        self.allocated = state.allocated
        self.evaluator = evaluator
        known = index.free(state.allocated)
        self._free = known.devices
        # selectors, binding and CEL environment decide a device's verdict: the signature of the memo
        signature = (rules.binding, evaluator.version, evaluator.gates,
                     *(tuple(repr(s) for s in data.class_selectors) for data in alternatives))
        self._usable = known.usable_for(signature)

    @classmethod
    def build(cls, claims: Sequence[Obj], classes: Mapping[str, Obj], index: SliceIndex, rules: Rules,
              state: AllocatedState, evaluator: SelectorEvaluator) -> Precheck | None:  # fmt: skip
        """The test for these claims, or None where it cannot be exact."""
        if any(_uses_all(claim) for claim in claims) or not _unnamed_parse(index.unnamed):
            return None
        search = Search(list(claims), None, [], rules, state, evaluator)
        try:
            validate(search, classes)
        except AllocationError:
            return None
        alternatives = _first_request(search)
        if not alternatives:
            return None
        return cls(alternatives, index, rules, state, evaluator)

    def rejects(self, node: Obj | None) -> bool:
        """True only when the allocator would return None on ``node``."""
        index = self.index
        visible = index.local(node)
        if index.unnamed:
            visible = [*visible, *(i for i in index.unnamed_positions if slice_matches(index.slices[i], node))]
        if self.rules.invalid_pool_error and not _no_invalid_pool([index.infos[i] for i in visible]):
            return False
        free, usable = self._free, self._usable
        try:
            for i in visible:
                verdict = usable[i]
                if verdict is None:
                    candidates = free[i]
                    if candidates is None:
                        candidates = free[i] = [c for c in index.infos[i].candidates if c.id not in self.allocated]
                    verdict = usable[i] = any(self._usable_device(c) for c in candidates)
                if verdict:
                    return False
        except AllocationError:
            return False
        return True

    def _usable_device(self, candidate: Candidate) -> bool:
        device = candidate.device
        if not self.rules.binding and device.get("bindingConditions"):
            return False
        for data in self.alternatives:
            if not data.class_selectors:
                return True
            if self.evaluator.matches(data.class_selectors, device, candidate.id, data.class_owner):
                return True
        return False


def _uses_all(claim: Obj) -> bool:
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        specs = [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]
        if any(spec.get("allocationMode") == ALL for spec in specs):
            return True
    return False


def _first_request(search: Search) -> list[RequestData]:
    """R's request data (one per subrequest), or [] when the requests before it are not all empty."""
    for claim_i, count in enumerate(search.request_counts):
        for request_i in range(count):
            data = search.request_data[(claim_i, request_i, 0)]
            if data.parent is None:
                if data.num_devices <= 0:
                    continue
                return [] if data.request.admin_access else [data]
            subs = []
            sub_i = 0
            while (claim_i, request_i, sub_i) in search.request_data:
                subs.append(search.request_data[(claim_i, request_i, sub_i)])
                sub_i += 1
            if any(d.num_devices <= 0 or d.request.admin_access for d in subs):
                return []
            return subs
    return []


def _unnamed_parse(slices: Sequence[Obj]) -> bool:
    """Whether gathering these slices can never fail on a node selector (node independent)."""
    for slice_ in slices:
        extracted = info(slice_)
        if extracted.node_name or extracted.all_nodes:
            continue
        selectors = [extracted.node_selector] if extracted.node_selector is not None else []
        if not selectors and extracted.per_device:
            selectors = [d.get("nodeSelector") for d in (slice_.get("spec") or {}).get("devices") or []
                         if not d.get("nodeName") and not d.get("allNodes") and d.get("nodeSelector") is not None]
        try:
            for selector in selectors:
                compile_node_selector(selector)
        except NodeSelectorError:
            return False
    return True


def _no_invalid_pool(infos: Sequence[SliceInfo]) -> bool:
    """1.34: no two slices of one pool and no duplicate device name (so no pool can be invalid)."""
    if len(infos) == 1:
        return infos[0].duplicate is None
    seen: set[tuple[str, str]] = set()
    for extracted in infos:
        key = (extracted.driver, extracted.pool)
        if key in seen or extracted.duplicate is not None:
            return False
        seen.add(key)
    return True
