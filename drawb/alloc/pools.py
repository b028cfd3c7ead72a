"""Gathering the resource pools visible on a node (``GatherPools``).

A slice counts when it is local to the node, selects it (``nodeSelector``), serves ``allNodes``, or
(with DRAPartitionableDevices) has a device whose own node selection matches. Slices group by
(driver, pool); only the newest ``generation`` counts. A pool is incomplete when it has fewer or
more slices than ``resourceSliceCount``, invalid when two of its devices share a name.

Pool order: Go iterates a map here, so the order is random in the schedulers of 1.34 and 1.35 (and
in the stable implementation of every version); drawb sorts pools by driver and pool name, which is
what the incubating and experimental implementations of 1.36 and later do. The experimental
implementation puts pools with binding conditions last.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from drawb.alloc.errors import AllocationError
from drawb.alloc.nodes import node_matches
from drawb.alloc.slices import info
from drawb.alloc.rules import rules_for
from drawb.alloc.versions import Flavor
from drawb.api.nodeaffinity import NodeSelectorError


@dataclass
class Pool:
    """The newest generation of one (driver, pool) visible on the node."""

    driver: str
    name: str
    generation: int
    slices: list[Mapping[str, Any]] = field(default_factory=list)
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    counter_sets: dict[str, Mapping[str, Any]] | None = None  # 1.35+: counter set name -> CounterSet
    other_slices: list[Mapping[str, Any]] = field(default_factory=list)  # 1.35+: not targeting the node

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def _spec(slice_: Mapping[str, Any]) -> Mapping[str, Any]:
    return slice_.get("spec") or {}


def _slice_name(slice_: Mapping[str, Any]) -> str:
    return (slice_.get("metadata") or {}).get("name", "")


def has_binding_conditions(slice_: Mapping[str, Any]) -> bool:
    """Whether any device of the slice lists binding conditions (``!= nil``: an empty list counts)."""
    return info(slice_).binding


def slice_matches(slice_: Mapping[str, Any], node: Mapping[str, Any] | None) -> bool:
    """Whether the slice targets the node (AllocationError for a node selector that cannot be parsed)."""
    extracted = info(slice_)
    node_name, all_nodes, selector = extracted.node_name, extracted.all_nodes, extracted.node_selector
    if node_name:
        return node is not None and (node.get("metadata") or {}).get("name") == node_name
    if all_nodes or selector is not None:
        try:
            return node_matches(node, node_name, all_nodes, selector)
        except NodeSelectorError as err:
            raise AllocationError(
                f"gather pool information: failed to perform node selection for slice {_slice_name(slice_)}: "
                f"failed to parse node selector: {err}"
            ) from None
    if extracted.per_device:
        for device in _spec(slice_).get("devices") or []:
            try:
                if node_matches(node, device.get("nodeName") or "", bool(device.get("allNodes")), device.get("nodeSelector")):
                    return True
            except NodeSelectorError as err:
                raise AllocationError(
                    f"gather pool information: failed to perform node selection for device {device.get('name', '')} "
                    f"in slice {_slice_name(slice_)}: failed to parse node selector: {err}"
                ) from None
    return False


def _add(pools: dict[tuple[str, str], Pool], slice_: Mapping[str, Any]) -> None:
    extracted = info(slice_)
    key = (extracted.driver, extracted.pool)
    generation = extracted.generation
    pool = pools.get(key)
    if pool is None:
        pools[key] = Pool(key[0], key[1], generation, [slice_])
        return
    if generation < pool.generation:
        return
    if generation > pool.generation:
        pool.slices = []
        pool.generation = generation
    pool.slices.append(slice_)


def _check(pool: Pool) -> None:
    pool.incomplete = len(pool.slices) != info(pool.slices[0]).count
    if len(pool.slices) == 1:
        duplicate = info(pool.slices[0]).duplicate
        if duplicate is not None:
            pool.invalid, pool.invalid_reason = True, f"duplicate device name {duplicate}"
        return
    seen: set[str] = set()
    for slice_ in pool.slices:
        for device in _spec(slice_).get("devices") or []:
            name = device.get("name", "")
            if name in seen:
                pool.invalid, pool.invalid_reason = True, f"duplicate device name {name}"
                return
            seen.add(name)


def random_pool_order(flavor: Flavor) -> bool:
    """Whether Go's pool order is random (map order) for this allocator."""
    return rules_for(flavor).random_pool_order


PoolSlices = Callable[[str, str], Sequence[Mapping[str, Any]]]


def counters_anywhere(flavor: Flavor) -> bool:
    """Whether the pool gathering takes counter slices from every node, not just the target's."""
    return rules_for(flavor).counters_anywhere


def gather_pools(slices: Sequence[Mapping[str, Any]], node: Mapping[str, Any] | None, flavor: Flavor,
                 pool_slices: PoolSlices | None = None) -> list[Pool]:  # fmt: skip
    """The pools of ``slices`` visible on ``node``, in drawb's deterministic order (module docstring).

    ``pool_slices(driver, pool)``, when given, returns every slice of that pool among all slices
    (in their order); then ``slices`` need only hold the slices that can target the node (see
    ``drawb.alloc.index``), and a pool that looks incomplete from the node is completed from it."""
    every = pool_slices or (lambda driver, pool: slices)
    gathering = rules_for(flavor).pool_gathering
    if gathering == "slice-counters":
        return _gather_34(slices, node, flavor)
    if gathering == "node-slices":
        return _gather_35_stable(slices, node, flavor, every)
    return _gather(slices, node, flavor, every)


def _gather_34(slices: Sequence[Mapping[str, Any]], node: Mapping[str, Any] | None, flavor: Flavor) -> list[Pool]:
    experimental = flavor.impl == "experimental"
    pools: dict[tuple[str, str], Pool] = {}
    later: list[Mapping[str, Any]] = []
    partitionable = flavor.has("PartitionableDevices")
    for slice_ in slices:
        if not partitionable and info(slice_).per_device_set:
            continue
        if not slice_matches(slice_, node):
            continue
        if experimental and has_binding_conditions(slice_):
            later.append(slice_)
            continue
        _add(pools, slice_)
    for slice_ in later:
        _add(pools, slice_)
    result = sorted(pools.values(), key=lambda p: (p.driver, p.name))
    for pool in result:
        _check(pool)
    if experimental:
        result.sort(key=lambda p: any(has_binding_conditions(s) for s in p.slices))
    return result


def _generation(slice_: Mapping[str, Any]) -> int:
    return info(slice_).generation


def _slice_count(slice_: Mapping[str, Any]) -> int:
    return info(slice_).count


def _same_generation(slices: Sequence[Mapping[str, Any]], pool: Pool) -> list[Mapping[str, Any]] | None:
    """All slices of the pool's generation (``checkSlicesInPool``); None when a newer generation exists."""
    found = []
    for slice_ in slices:
        spec = _spec(slice_)
        if spec.get("driver", "") != pool.driver or (spec.get("pool") or {}).get("name", "") != pool.name:
            continue
        generation = _generation(slice_)
        if generation == pool.generation:
            found.append(slice_)
        elif generation > pool.generation:
            return None
    return found


def _gather_35_stable(slices: Sequence[Mapping[str, Any]], node: Mapping[str, Any] | None, flavor: Flavor,
                      every_of: PoolSlices) -> list[Pool]:  # fmt: skip
    pools: dict[tuple[str, str], Pool] = {}
    for slice_ in slices:
        if not flavor.has("PartitionableDevices") and _spec(slice_).get("perDeviceNodeSelection") is not None:
            continue
        if slice_matches(slice_, node):
            _add(pools, slice_)
    result = []
    for pool in sorted(pools.values(), key=lambda p: (p.driver, p.name)):
        _check(pool)
        if pool.incomplete:
            every = _same_generation(every_of(pool.driver, pool.name), pool)
            if every is None:
                continue
            pool.incomplete = len(every) != _slice_count(pool.slices[0])
        result.append(pool)
    return result


def _duplicate_device(slices: Sequence[Mapping[str, Any]]) -> str | None:
    if len(slices) == 1:
        duplicate = info(slices[0]).duplicate
        return None if duplicate is None else f"duplicate device name {duplicate}"
    seen: set[str] = set()
    for slice_ in slices:
        for device in _spec(slice_).get("devices") or []:
            name = device.get("name", "")
            if name in seen:
                return f"duplicate device name {name}"
            seen.add(name)
    return None


def _consumption_error(counter_sets: dict[str, Mapping[str, Any]], slices: Sequence[Mapping[str, Any]]) -> str | None:
    for slice_ in slices:
        for device in _spec(slice_).get("devices") or []:
            for consumption in device.get("consumesCounters") or []:
                set_name = consumption.get("counterSet", "")
                counter_set = counter_sets.get(set_name)
                if counter_set is None:
                    return f"counter set {set_name} not found"
                for counter in consumption.get("counters") or {}:
                    if counter not in (counter_set.get("counters") or {}):
                        return f"counter {counter} not found in counter set {counter_set.get('name', '')}"
    return None


def _build(pool: Pool, flavor: Flavor, every: list[Mapping[str, Any]] | None) -> Pool:
    """Split counter-set slices from device slices and validate names and counter references (``buildPool``)."""
    rules = rules_for(flavor)
    if rules.build_37:
        return _build_37(pool, flavor, every)
    slices = pool.slices
    sort_slices = rules.sort_slices
    if flavor.has("PartitionableDevices"):
        device_slices = [s for s in slices if not _spec(s).get("sharedCounters")]
        counter_slices = [s for s in slices if _spec(s).get("sharedCounters")]
    else:
        device_slices, counter_slices = list(slices), []
    if sort_slices:
        device_slices.sort(key=_slice_name)
    pool.slices = device_slices
    reason = _duplicate_device(device_slices)
    if reason is None and flavor.has("PartitionableDevices"):
        counter_sets: dict[str, Mapping[str, Any]] = {}
        for slice_ in counter_slices:
            for counter_set in _spec(slice_).get("sharedCounters") or []:
                name = counter_set.get("name", "")
                if name in counter_sets:
                    reason = f"duplicate counter set name {name}"
                    break
                counter_sets[name] = counter_set
            if reason:
                break
        if reason is None:
            reason = _consumption_error(counter_sets, slices)
        if reason is None:
            pool.counter_sets = counter_sets
            if every is not None and len(every) != len(slices):
                names = {_slice_name(s) for s in slices}
                pool.other_slices = [s for s in every if _slice_name(s) not in names]
                reason = _consumption_error(counter_sets, pool.other_slices)
    if reason is not None:
        pool.invalid, pool.invalid_reason = True, reason
        pool.slices, pool.other_slices, pool.counter_sets = [], [], None
    return pool


def _counter_sets(counter_slices: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Mapping[str, Any]], str | None]:
    counter_sets: dict[str, Mapping[str, Any]] = {}
    for slice_ in counter_slices:
        for counter_set in _spec(slice_).get("sharedCounters") or []:
            name = counter_set.get("name", "")
            if name in counter_sets:
                return counter_sets, f"duplicate counter set name {name}"
            counter_sets[name] = counter_set
    return counter_sets, None


def _build_37(pool: Pool, flavor: Flavor, every: list[Mapping[str, Any]] | None) -> Pool:
    """1.37: counter-set slices that do not target the node come from the rest of the pool."""
    partitionable = flavor.has("PartitionableDevices")
    slices = sorted(pool.slices, key=_slice_name)
    device_slices = [s for s in slices if not (partitionable and info(s).shared_counters)]
    counter_slices = [s for s in slices if partitionable and info(s).shared_counters]
    others: list[Mapping[str, Any]] = []
    if every is not None and len(slices) < len(every):
        names = {_slice_name(s) for s in slices}
        for slice_ in every:
            if _slice_name(slice_) in names:
                continue
            if partitionable and info(slice_).shared_counters:
                counter_slices.append(slice_)
            else:
                others.append(slice_)
    pool.slices = device_slices
    reason = _duplicate_device(device_slices)
    if reason is None and partitionable:
        counter_sets, reason = _counter_sets(counter_slices)
        if reason is None:
            reason = _consumption_error(counter_sets, device_slices) or _consumption_error(counter_sets, others)
        if reason is None:
            pool.counter_sets, pool.other_slices = counter_sets, others
    if reason is not None:
        pool.invalid, pool.invalid_reason = True, reason
        pool.slices, pool.other_slices, pool.counter_sets = [], [], None
    return pool


def uses_compatibility_groups(slice_: Mapping[str, Any]) -> bool:
    """Whether a device of the slice declares counter compatibility groups (1.37 alpha)."""
    return any(
        c.get("compatibilityGroups") for d in _spec(slice_).get("devices") or [] for c in d.get("consumesCounters") or []
    )


def _gather(slices: Sequence[Mapping[str, Any]], node: Mapping[str, Any] | None, flavor: Flavor,
            every_of: PoolSlices) -> list[Pool]:  # fmt: skip
    """1.35 incubating and experimental, 1.36+: counter-set slices count for the whole pool, and a pool
    that looks incomplete from this node is completed from the slices targeting other nodes."""
    partitionable = flavor.has("PartitionableDevices")
    rules = rules_for(flavor)
    binding_last, binding_slices_last = rules.binding_last, rules.binding_slices_last
    pools: dict[tuple[str, str], Pool] = {}
    later: list[Mapping[str, Any]] = []
    # Until 1.36 (and in stable 1.37) counter-set slices count wherever they are.
    anywhere = counters_anywhere(flavor)
    ignore_groups = rules.ignore_compatibility_groups
    for slice_ in slices:
        extracted = info(slice_)
        if not partitionable and (extracted.per_device_set or extracted.shared_counters):
            continue
        if ignore_groups and uses_compatibility_groups(slice_):
            continue
        if not ((anywhere and extracted.shared_counters) or slice_matches(slice_, node)):
            continue
        if binding_slices_last and not extracted.shared_counters and extracted.binding:
            later.append(slice_)
            continue
        _add(pools, slice_)
    for slice_ in later:
        _add(pools, slice_)
    result, with_binding = [], []
    for pool in sorted(pools.values(), key=lambda p: (p.driver, p.name)):
        if len(pool.slices) == _slice_count(pool.slices[0]):
            _build(pool, flavor, None)
        else:
            every = _same_generation(every_of(pool.driver, pool.name), pool)
            if every is None:
                continue
            if ignore_groups:
                every = [s for s in every if not uses_compatibility_groups(s)]
            if len(every) != _slice_count(pool.slices[0]):
                pool.slices, pool.incomplete = [], True
            else:
                _build(pool, flavor, every)
        if binding_last and any(has_binding_conditions(s) for s in pool.slices):
            with_binding.append(pool)
        else:
            result.append(pool)
    return result + with_binding
