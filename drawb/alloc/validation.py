"""Validation before the search, claim by claim and request by request (the first error wins):
subrequests need DRAPrioritizedList, capacity requests DRAConsumableCapacity; every selector needs
CEL; admin access needs its gate; the class must exist; the mode must be known; ``All`` needs
complete, valid pools and fixes its devices now; at most 32 devices per claim; known constraints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drawb.alloc.constraints import DistinctAttribute, MatchAttribute
from drawb.alloc.errors import AllocationError
from drawb.alloc.requests import ALL, EXACT_COUNT, Request, RequestData, kobj
from drawb.alloc.search import MAX_RESULTS, Search


def _has_capacity(request: Mapping[str, Any]) -> bool:
    exactly = request.get("exactly")
    if exactly is not None and exactly.get("capacity") is not None:
        return True
    return any(sub.get("capacity") is not None for sub in request.get("firstAvailable") or [])


def validate(search: Search, classes: Mapping[str, Mapping[str, Any]]) -> None:
    """Fill ``search.request_data`` and ``search.constraints``; AllocationError on the first problem."""
    rules = search.rules
    for claim_i, claim in enumerate(search.claims):
        devices = (claim.get("spec") or {}).get("devices") or {}
        min_devices = 0
        for request_i, request in enumerate(devices.get("requests") or []):
            subrequests = request.get("firstAvailable") or []
            name = request.get("name", "")
            if subrequests and not rules.flavor.has("PrioritizedList"):
                raise AllocationError(
                    f"claim {kobj(claim)}, request {name}: has subrequests, but the DRAPrioritizedList feature is disabled"
                )
            if rules.capacity_gate_check and not rules.flavor.has("ConsumableCapacity") and _has_capacity(request):
                exact = (request.get("exactly") or {}).get("capacity") is not None
                where = f"request {name}"
                if rules.subrequest_capacity_error and not exact:
                    sub = next(s for s in subrequests if s.get("capacity") is not None)
                    where = f"subrequest {sub.get('name', '')}"
                raise AllocationError(
                    f"claim {kobj(claim)}, {where}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
                )
            if subrequests:
                parent = Request.exact({"name": name, "exactly": {}})
                smallest = None
                for sub_i, subrequest in enumerate(subrequests):
                    data = _validate_request(search, classes, claim_i, Request.sub(subrequest), parent, (claim_i, request_i, sub_i))
                    search.request_data[(claim_i, request_i, sub_i)] = data
                    smallest = data.num_devices if smallest is None else min(smallest, data.num_devices)
                needed = smallest or 0
            else:
                data = _validate_request(search, classes, claim_i, Request.exact(request), None, (claim_i, request_i, 0))
                search.request_data[(claim_i, request_i, 0)] = data
                needed = data.num_devices
            if rules.limit_per_request and needed > MAX_RESULTS - min_devices:
                raise AllocationError(
                    f"claim {kobj(claim)}, request {name}: adding {needed} devices exceeds the claim limit of "
                    f"{MAX_RESULTS}, with {min_devices} already accounted for"
                )
            min_devices += needed
        if min_devices > MAX_RESULTS:
            raise AllocationError(
                f"claim {kobj(claim)}: number of requested devices {min_devices} exceeds the claim limit of {MAX_RESULTS}"
            )
        search.constraints[claim_i] = _constraints(claim, devices.get("constraints") or [], rules)


def _constraints(claim: Mapping[str, Any], constraints: list, rules: Any) -> list:
    built = []
    for i, constraint in enumerate(constraints):
        if constraint.get("matchAttribute") is not None:
            built.append(MatchAttribute(constraint.get("requests"), constraint["matchAttribute"], rules))
        elif constraint.get("distinctAttribute") is not None and rules.distinct_supported:
            built.append(DistinctAttribute(constraint.get("requests"), constraint["distinctAttribute"], rules))
        else:
            raise AllocationError(f"claim {kobj(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)")
    return built


def _validate_request(search: Search, classes: Mapping[str, Mapping[str, Any]], claim_i: int, request: Request,
                      parent: Request | None, key: tuple[int, int, int]) -> RequestData:  # fmt: skip
    claim = search.claims[claim_i]
    rules = search.rules
    data = RequestData(request=request, parent=parent)
    if request.derived and not rules.flavor.has("DerivedAttributes") and rules.derived_gate_error:
        raise AllocationError(
            f"claim {kobj(claim)}, request {request.name}: cannot handle request with derived attributes, the feature is disabled"
        )
    for i, selector in enumerate(request.selectors):
        if selector.get("cel") is None:
            raise AllocationError(
                f"claim {kobj(claim)}, request {request.name}, selector #{i}: CEL expression empty (unsupported selector type?)"
            )
    if not rules.flavor.has("AdminAccess") and request.has_admin_access:
        raise AllocationError(f"claim {kobj(claim)}, request {request.name}: admin access is requested, but the feature is disabled")
    if not request.class_name:
        raise AllocationError(f"claim {kobj(claim)}, request {request.name}: missing device class name (unsupported request type?)")
    device_class = classes.get(request.class_name)
    if device_class is None:
        raise AllocationError(
            f"claim {kobj(claim)}, request {request.name}: could not retrieve device class {request.class_name}: "
            f'deviceclass.resource.k8s.io "{request.class_name}" not found'
        )
    data.device_class = device_class
    data.class_selectors = list((device_class.get("spec") or {}).get("selectors") or [])
    data.class_owner = f"class {(device_class.get('metadata') or {}).get('name', '')}"
    if request.mode == EXACT_COUNT:
        data.num_devices = request.count
    elif request.mode == ALL:
        for pool in search.pools:
            if pool.incomplete:
                raise AllocationError(
                    f"claim {kobj(claim)}, request {request.name}: asks for all devices, but resource pool {pool.id} "
                    "is currently being updated"
                )
            if pool.invalid:
                raise AllocationError(
                    f"claim {kobj(claim)}, request {request.name}: asks for all devices, but resource pool {pool.id} "
                    "is currently invalid"
                )
            for candidate in search.pool_candidates(pool):
                if not search.selectable(key, data, candidate):
                    continue
                if rules.consumable_capacity and not search.capacity_fits(data, candidate.device, candidate.id, claim_i,
                                                                         state=rules.all_mode_capacity_state):
                    continue
                data.all_devices.append(candidate)
        data.num_devices = len(data.all_devices)
    else:
        raise AllocationError(f"claim {kobj(claim)}, request {request.name}: unsupported count mode {request.mode}")
    return data

