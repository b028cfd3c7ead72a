"""Objects the target reads differently: constraints over attributes that can be lists
(``alloc.list_attribute_constraints``) and nodes whose devices the allocator now tries in name order
(``alloc.deterministic_order``)."""

from __future__ import annotations

from collections import defaultdict

from drawb.gpu.releases import LIST_ATTRIBUTES
from drawb.upgrade.inputs import Inputs, Item, allocated, constraints
from drawb.upgrade.report import WARNING, Finding

LISTS = "alloc.list_attribute_constraints"
ORDER = "alloc.deterministic_order"
_LIST_KEYS = ("ints", "bools", "strings", "versions")
_LIST_GATE = "DRAListTypeAttributes"
_FIELDS = {"matchAttribute": "share at least one value", "distinctAttribute": "share no value"}


def _constrained(inputs: Inputs) -> list[tuple[Item, str, str, str]]:
    """(item, path, field, attribute) of every matchAttribute and distinctAttribute of a claim not yet allocated."""
    return [(item, path, field, constraint[field])
            for item in inputs.of("ResourceClaim", "ResourceClaimTemplate") if not allocated(item)
            for path, constraint in constraints(item) for field in _FIELDS if isinstance(constraint.get(field), str)]


def _lists_among(inputs: Inputs, names: set[str]) -> dict[str, str]:
    """Which of ``names`` are lists somewhere, and where: published as lists by the cluster's slices, or by an
    NVIDIA release."""
    found = {name: f"the NVIDIA DRA driver {release} publishes it as a list with its {_LIST_GATE} gate on"
             for name, release in LIST_ATTRIBUTES.items() if name in names}
    for item in inputs.of("ResourceSlice"):
        driver = item.spec.get("driver", "")
        wanted = {name.removeprefix(f"{driver}/"): name for name in names - set(found)}
        for device in item.spec.get("devices") or ():
            attributes = device.get("attributes") or {}
            for key, name in wanted.items():
                value = attributes.get(key)
                if isinstance(value, dict) and any(k in value for k in _LIST_KEYS):
                    found[name] = f"{item.label} publishes it as a list"
    return found


def list_constraints(inputs: Inputs) -> list[Finding]:
    """A finding for each matchAttribute or distinctAttribute over an attribute that can be a list, when the
    target is the first whose allocator compares lists as sets."""
    if not inputs.crosses(LISTS):
        return []
    constrained = _constrained(inputs)
    lists = _lists_among(inputs, {name for *_, name in constrained}) if constrained else {}
    return [Finding(
        "meaning", WARNING, item.where, item.label, f"{path}.{field}",
        f"{field} {name}: {lists[name]}; from Kubernetes {inputs.first_with(LISTS)}, with {_LIST_GATE} on, the "
        f"scheduler takes the devices when their lists {_FIELDS[field]}, not when the values are equal",
        f"if equal lists matter, keep {_LIST_GATE} off in the cluster and in the driver, or compare the values in a "
        f"selector") for item, path, field, name in constrained if name in lists]


def allocation_order(inputs: Inputs) -> list[Finding]:
    """A finding for each node where one driver's devices sit in several slices or pools, when the target is the
    first whose allocator tries pools and slices in name order."""
    if not inputs.crosses(ORDER):
        return []
    where: dict[tuple[str, str], set[str]] = defaultdict(set)
    slices: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for item in inputs.of("ResourceSlice"):
        node, driver = item.spec.get("nodeName"), item.spec.get("driver")
        if not node or not item.spec.get("devices"):
            continue
        pool = (item.spec.get("pool") or {}).get("name", "")
        slices[(node, driver)].add((pool, str((item.obj.get("metadata") or {}).get("name"))))
        where[(node, driver)].add(item.where)
    found = []
    for (node, driver), held in sorted(slices.items()):
        pools = {pool for pool, _ in held}
        if len(held) < 2:
            continue
        origin = ", ".join(sorted(where[(node, driver)]))
        found.append(Finding(
            "meaning", WARNING, origin, f"Node {node}", "",
            f"driver {driver} publishes its devices on this node in {len(held)} slices of {len(pools)} pool(s) "
            f"({', '.join(sorted(name for _, name in held))}); from Kubernetes {inputs.first_with(ORDER)} the scheduler "
            f"tries pools and slices in name order, so a claim may get other devices here than it does now",
            "nothing to change unless a workload relies on which device it gets; then select that device by an "
            "attribute (uuid, resource.kubernetes.io/pciBusID)"))
    return found
