"""The behaviours that differ between Kubernetes versions and allocator implementations, named,
so the search and validation read one flag instead of comparing versions."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from drawb.alloc.requests import kobj
from drawb.alloc.versions import Flavor


@dataclass(frozen=True)
class Rules:
    """Resolved from a Flavor by ``rules_for``."""

    flavor: Flavor
    max_size_error: bool  # prune branches that would exceed 32 results (not stable 1.34/1.35)
    consumable_capacity: bool  # capacity requests and shared devices are honoured
    capacity_gate_check: bool  # capacity requests with the gate off are an error
    distinct_supported: bool  # distinctAttribute is a known constraint
    distinct_by_pointer: bool  # 1.34: only the same device clashes
    list_attributes: bool  # list-type attribute semantics in constraints
    match_restores_intersection: bool  # 1.37: backtracking widens matchAttribute's common set again
    distinct_stack: bool  # 1.37: distinctAttribute remembers every device, not one per request
    binding: bool  # devices with binding conditions may be picked
    binding_results: bool  # binding conditions copied into results
    target_node_selector: bool  # node-local results select the target node (also bindsToNode)
    capacity_slot_quirk: bool  # 1.34 experimental checks capacity of devices[slot index]
    partitionable: bool
    fractional: bool  # 1.37 DRAFractionalCapacityRange: milli-unit range arithmetic
    taints: bool
    taint_effects_all: bool  # 1.34: every taint needs a toleration, whatever its effect
    all_keeps_subrequest: bool  # "All" mode keeps the subrequest index between slots (1.36+)
    invalid_pool_error: bool  # reaching an invalid pool in the search is an error (1.34)
    skip_unusable_pools: bool  # the search skips incomplete and invalid pools (1.35+)
    combinations: bool  # within a request, later slots only try later devices (1.36+ incubating, experimental)
    tolerations_in_results: bool  # results carry the request's tolerations (1.35+)
    limit_per_request: bool  # the 32-device limit is checked request by request (from 1.34.12, 1.35.9, 1.36.5, 1.37.1)
    rollback: bool  # 1.36: a rejected candidate gives back counters, constraint entries and marks
    all_mode_counters_crash: bool  # 1.35.0-5, 1.36.0-1: an "All" device consuming counters crashes kube-scheduler
    skip_shared_counters: bool  # a shared device already consuming capacity has its counters taken (1.35+)
    shared_consume_counters: bool  # 1.36: existing shared allocations consume their device's counters
    shared_ids_in_use: bool  # 1.37: existing shared allocations count as capacity in use
    compatibility_groups: bool  # 1.37 experimental: DRADeviceCompatibilityGroups checks
    node_operations: bool  # 1.37 experimental: slices may skip node operations (DRAOptionalNodeOperations)
    config_once: bool  # 1.37: a claim config is added once, and covers-all configs lose ``requests``
    invalid_pools_fail_node: bool  # when nothing fits and some pool is invalid: unschedulable here (1.35+)
    checked_range_arithmetic: bool  # 1.37: capacity rounding keeps the step's format, refuses overflow and negatives
    # where counter sets are counted: "slice" (1.34), "pool" (by name: 1.35, 1.36.0 to 1.36.3), "driver-pool"
    counter_scope: str
    subrequest_capacity_error: bool  # 1.35+: a capacity request's gate error names the subrequest
    derived_gate_error: bool  # 1.37: a request with derived attributes needs DRADerivedAttributes
    all_mode_capacity_state: bool  # before 1.37: "All" mode checks capacity against what is already allocated
    pool_gathering: str  # "slice-counters" (1.34), "node-slices" (1.35 stable) or "whole-pool": buildPools variant
    random_pool_order: bool  # Go's pool order is map order (1.34, 1.35, stable)
    counters_anywhere: bool  # counter-set slices count wherever they are, not only the target node's
    build_37: bool  # 1.37 incubating/experimental buildPool
    sort_slices: bool  # 1.36+ (not stable): a pool's slices are sorted by name
    binding_last: bool  # devices with binding conditions are tried last
    binding_slices_last: bool  # 1.35 experimental: slices with binding conditions are tried last
    ignore_compatibility_groups: bool  # 1.37 without DRADeviceCompatibilityGroups: the groups are dropped

    @staticmethod
    def kobj(claim) -> str:
        return kobj(claim)


@lru_cache(maxsize=256)
def rules_for(flavor: Flavor) -> Rules:
    """The rules of one allocator run."""
    minor, impl = flavor.minor, flavor.impl
    experimental = impl == "experimental"
    legacy = minor == 34 or (minor == 35 and impl == "stable")
    has_capacity_code = experimental or (impl == "incubating" and minor >= 36)
    stable = impl == "stable"
    return Rules(
        flavor=flavor,
        max_size_error=impl != "stable" or minor >= 36,
        consumable_capacity=has_capacity_code and flavor.has("ConsumableCapacity"),
        capacity_gate_check=has_capacity_code,
        distinct_supported=has_capacity_code,
        distinct_by_pointer=minor == 34,
        list_attributes=flavor.has("ListTypeAttributes"),
        match_restores_intersection=minor >= 37,
        distinct_stack=minor >= 37,
        binding=flavor.binding,
        binding_results=has_capacity_code and (flavor.has("DeviceBinding") if minor == 34 else flavor.binding),
        target_node_selector=has_capacity_code,
        capacity_slot_quirk=minor == 34,
        partitionable=flavor.has("PartitionableDevices"),
        fractional=flavor.has("FractionalCapacityRange"),
        taints=flavor.has("DeviceTaints"),
        taint_effects_all=legacy,
        all_keeps_subrequest=minor >= 36,
        invalid_pool_error=minor == 34,
        skip_unusable_pools=minor >= 35,
        combinations=minor >= 36 and impl != "stable",
        tolerations_in_results=not legacy,
        limit_per_request=flavor.behaves("alloc.claim_limit_per_request"),
        rollback=minor >= 36,
        all_mode_counters_crash=not flavor.behaves("alloc.all_mode_devices_know_their_pool"),
        skip_shared_counters=minor >= 35 and has_capacity_code,
        shared_consume_counters=minor >= 36 and impl != "stable",
        shared_ids_in_use=minor >= 37,
        compatibility_groups=flavor.has("CompatibilityGroups"),
        node_operations=minor >= 37 and experimental,
        config_once=minor >= 37,
        invalid_pools_fail_node=minor >= 35,
        checked_range_arithmetic=minor >= 37,
        counter_scope=("slice" if minor == 34 else "driver-pool" if flavor.behaves("alloc.counters_per_driver_pool")
                       else "pool"),
        subrequest_capacity_error=minor >= 35,
        derived_gate_error=minor >= 37,
        all_mode_capacity_state=minor < 37,
        pool_gathering="slice-counters" if minor == 34 else "node-slices" if minor == 35 and stable else "whole-pool",
        random_pool_order=minor <= 35 or stable,
        counters_anywhere=not (minor == 34 or (minor == 35 and stable)) and (minor < 37 or stable),
        build_37=minor >= 37 and not stable,
        sort_slices=minor >= 36 and not stable,
        binding_last=experimental or (minor >= 36 and impl == "incubating"),
        binding_slices_last=minor == 35 and experimental,
        ignore_compatibility_groups=minor >= 37 and not flavor.has("CompatibilityGroups"),
    )
