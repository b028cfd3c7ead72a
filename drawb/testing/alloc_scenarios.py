"""Random allocation scenarios from the NVIDIA hardware: nodes, slices, existing allocations, claims.

``generate(seed)`` draws one scenario, deterministically: one to three GPU nodes as the NVIDIA DRA
driver publishes them (static MIG layouts, or partitionable "dynamic MIG" GPUs whose devices consume
shared counters, one slice per GPU as on Kubernetes 1.34), device taints, claims already allocated on
those nodes (some with admin access), DeviceClasses of its own, and the claims of one pod: counts,
``All``, ``firstAvailable``, ``matchAttribute``/``distinctAttribute``, selectors that fail at run time,
admin access, tolerations, a request over the claim limit. Every object is labelled with the
scenario's name, and every name is prefixed by it, so many scenarios can share one cluster without
seeing each other's devices (all slices are node-local).

The scenario says nothing about what the allocator must answer: a differential (tests/live) or a
benchmark decides that. ``drawb.alloc`` callers take ``node``, ``slices``, ``classes``, ``allocated``
and ``claims`` from it as they are, or better as the API server stored them.
"""

from __future__ import annotations

import collections
import copy
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from drawb import versions
from drawb.cluster.sim.catalog import MODELS
from drawb.cluster.sim.classes import device_class, nvidia_device_classes
from drawb.cluster.sim.nodes import node_object
from drawb.cluster.sim.publish import (
    GPU_DRIVER,
    Gpu,
    GpuNode,
    MigInstance,
    binary_si,
    compute_domain_slice,
    full_gpu_device,
    gpu_slice,
    mig_device,
)
from drawb.cluster.sim.tree import copy_tree

SCENARIO_LABEL = "drawb.dev/alloc-scenario"
MANAGED_BY = {"app.kubernetes.io/managed-by": "drawb"}
ADMIN_NAMESPACE_LABEL = {"resource.kubernetes.io/admin-access": "true"}  # admin access needs it (1.34)
GATES = {"DRAPartitionableDevices": True, "DRADeviceTaints": True}  # on top of the 1.34 defaults
CLAIM_LIMIT = 32  # devices per claim (resource.k8s.io/v1 AllocationResultsMaxSize)
TAINT_KEYS = ("gpu.nvidia.com/xid", "gpu.nvidia.com/gpu-lost", "gpu.nvidia.com/unmonitored")
TAINT_EFFECTS = ("NoSchedule", "NoExecute")

_MODELS = {  # catalog key -> driver version, CUDA driver version, addressing mode
    "A100-SXM4-40GB": ("570.172.08", "12.8", None),
    "H100-80GB-HBM3": ("580.95.05", "13.0", "None"),
    "H200": ("580.159.03", "13.0", "None"),
    "L4": ("570.172.08", "12.8", None),
}
# Static MIG layouts as (compute slices of the profile, placement start); resolved per model to its
# first profile of that size (1g.10gb on an H100, 1g.5gb on an A100, 1g.18gb on an H200).
_LAYOUTS = (
    ((1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6)),
    ((2, 0), (1, 2), (1, 3), (3, 4)),
    ((7, 0),),
    ((3, 0), (3, 4)),
    ((4, 0), (2, 4), (1, 6)),
    ((2, 0), (2, 2), (2, 4)),
)
# Dynamic MIG placements published per partitionable GPU (a subset of the driver's 26, to stay small).
_PLACEMENTS = ((1, 0), (1, 1), (1, 4), (2, 0), (2, 2), (3, 0), (3, 4), (4, 0), (7, 0))


@dataclass
class AllocScenario:
    """One generated scenario: what a cluster holds and the claims of one pod to place on each node."""

    name: str
    seed: int
    nodes: list[dict]
    slices: list[dict]
    classes: list[dict]  # the scenario's own classes; the NVIDIA ones come from ``nvidia_classes()``
    allocated: list[dict]  # claims with status.allocation, already on the nodes
    claims: list[dict]  # the pod's claims, in pod order (no status)
    features: list[str] = field(default_factory=list)  # what it exercises, for reports

    def objects(self) -> list[dict]:
        """Every object to create, in order (nodes, slices, classes, allocated claims, claims)."""
        return [*self.nodes, *self.slices, *self.classes, *self.allocated, *self.claims]


def nvidia_classes() -> list[dict]:
    """The chart's DeviceClasses (shared by every scenario), labelled as drawb's."""
    return [_labelled(c, None) for c in nvidia_device_classes()]


def generate(seed: int, prefix: str = "ad", kubernetes_version: str = versions.DEFAULT,
             feature_gates: Mapping[str, bool] | None = None) -> AllocScenario:
    """The scenario of ``seed`` (the same seed always gives the same objects), shaped for that version's API
    with ``feature_gates`` (default: ``GATES``): no field that its API server would drop (a constraint that
    would be ``distinctAttribute`` is ``matchAttribute`` where the gates drop it), and nothing its scheduler
    crashes on (no ``allocationMode: All`` beside partitionable GPUs where that release's allocator crashes
    on an "All" device that consumes counters: drawb.alloc says SchedulerCrash)."""
    rng = random.Random(seed)
    name = f"{prefix}{seed:04d}"
    rules = versions.rules(kubernetes_version)
    gates = GATES if feature_gates is None else feature_gates
    dropped = rules.dropped_fields(gates)
    all_crashes = (not rules.has("alloc.all_mode_devices_know_their_pool")
                   and rules.gate_values(gates, enforce_locks=False)["DRAPartitionableDevices"])
    scenario = _Generator(rng, name, distinct="constraints[].distinctAttribute" not in dropped,
                          all_beside_counters=not all_crashes).build()
    scenario.seed = seed
    if versions.rules(kubernetes_version).has("api.counter_sets_in_own_slices"):
        scenario.slices = split_counters(scenario.slices)
    return scenario


def generate_many(count: int, first_seed: int = 0, prefix: str = "ad", kubernetes_version: str = versions.DEFAULT,
                  feature_gates: Mapping[str, bool] | None = None) -> list[AllocScenario]:
    """``count`` scenarios with consecutive seeds."""
    return [generate(first_seed + i, prefix, kubernetes_version, feature_gates) for i in range(count)]


def split_counters(slices: list[dict]) -> list[dict]:
    """The 1.35+ shape of partitionable slices: a slice holds ``sharedCounters`` or ``devices``, not both
    (the API server refuses both since 1.35), so each slice with both becomes a counters-only slice and a
    devices-only slice of the same pool, and the pool's ``resourceSliceCount`` counts them all."""
    def pool(rs: dict) -> tuple[str, str]:
        return rs["spec"]["driver"], rs["spec"]["pool"]["name"]

    out: list[dict] = []
    added: collections.Counter = collections.Counter()  # pool -> slices the split adds to it
    for rs in slices:
        spec = rs["spec"]
        if not (spec.get("sharedCounters") and spec.get("devices")):
            out.append(rs)
            continue
        counters = copy.deepcopy(rs)
        counters["metadata"]["name"] += "-counters"
        del counters["spec"]["devices"]
        devices = copy.deepcopy(rs)
        del devices["spec"]["sharedCounters"]
        out += [counters, devices]
        added[pool(rs)] += 1
    for rs in out:
        rs["spec"]["pool"]["resourceSliceCount"] += added[pool(rs)]
    return out


def _labelled(obj: dict, scenario: str | None) -> dict:
    meta = obj.setdefault("metadata", {})
    meta["labels"] = {**meta.get("labels", {}), **MANAGED_BY, **({SCENARIO_LABEL: scenario} if scenario else {})}
    return obj


@dataclass
class _Device:
    """A published device as the generator tracks it: where it is and what it consumes."""

    node: str
    pool: str
    device: dict
    kind: str  # "gpu" or "mig"
    counters: dict[str, int] = field(default_factory=dict)  # "<set>/<counter>" -> amount (partitionable)


class _Generator:
    def __init__(self, rng: random.Random, name: str, distinct: bool = True, all_beside_counters: bool = True):
        self.rng = rng
        self.name = name
        self.distinct = distinct  # distinctAttribute constraints survive the API server
        self.all_beside_counters = all_beside_counters  # "All" requests on nodes with partitionable GPUs
        self.features: list[str] = []
        self.devices: dict[str, list[_Device]] = {}
        self.partitionable: dict[str, bool] = {}
        self.capacity: dict[str, dict[str, int]] = {}  # node -> "<set>/<counter>" -> total
        self.products: list[str] = []  # product names on the scenario's nodes, so selectors often match
        self.has_mig = False
        self.profiles: list[str] = []  # MIG profiles published on the scenario's nodes

    def note(self, feature: str) -> None:
        if feature not in self.features:
            self.features.append(feature)

    # --- hardware ---------------------------------------------------------------------------

    def build(self) -> AllocScenario:
        nodes, slices = [], []
        for index in range(self.rng.choice((1, 1, 2, 2, 3))):
            node_name = f"{self.name}-n{index}"
            node, node_slices = self._node(node_name)
            nodes.append(_labelled(node, self.name))
            slices += [_labelled(s, self.name) for s in node_slices]
        classes = [_labelled(c, self.name) for c in self._classes()]
        allocated = [_labelled(c, self.name) for n in nodes for c in self._existing(n["metadata"]["name"])]
        claims = [_labelled(c, self.name) for c in self._claims(classes)]
        _bound_search(claims, max(len(devices) for devices in self.devices.values()))
        return AllocScenario(self.name, 0, nodes, slices, classes, allocated, claims, self.features)

    def _node(self, name: str) -> tuple[dict, list[dict]]:
        model_key = self.rng.choice(tuple(_MODELS))
        driver, cuda, addressing = _MODELS[model_key]
        model = MODELS[model_key]
        self.products.append(model.product_name)
        partitionable = bool(model.mig_profiles) and self.rng.random() < 0.3
        self.has_mig |= partitionable
        # One GPU when partitionable: its pool is then one slice, so the order in which the scheduler
        # reads slices (Go map order in 1.34) cannot change which device a failing selector meets first.
        gpu_count = 1 if partitionable else self.rng.choice((2, 4, 8))
        gpus = []
        for minor in range(gpu_count):
            pci = f"0000:{0x18 + minor * 0x11:02x}:00.0"
            root = f"pci0000:{0x15 + (minor // 2) * 0x22:02x}"
            mig: tuple[MigInstance, ...] = ()
            if model.mig_profiles and not partitionable and self.rng.random() < 0.4:
                mig = self._layout(model_key)
                self.has_mig = True
                self.note("static MIG")
            gpus.append(Gpu(minor, pci, root, mig))
        gpu_node = GpuNode(name, model_key, driver, cuda, tuple(gpus), addressing,
                           labels={"drawb.dev/scenario-node": name},
                           pool_generation=self.rng.choice((1, 1, 2)))
        node = node_object(self.name, gpu_node)
        node["metadata"].pop("uid", None)
        node.pop("status", None)
        self.partitionable[name] = partitionable
        if partitionable:
            self.note("partitionable devices")
            gpu_slices = self._partitionable_slices(gpu_node)
        else:
            gpu_slices = [copy_tree(gpu_slice(self.name, gpu_node))]  # its devices are read-only: tainted below
            self.devices[name] = [
                _Device(name, name, d, d["attributes"]["type"]["string"]) for d in gpu_slices[0]["spec"]["devices"]
            ]
        for s in gpu_slices:
            self._taint(s)
        cd = compute_domain_slice(self.name, gpu_node)
        return node, [*gpu_slices, cd]

    def _layout(self, model_key: str) -> tuple[MigInstance, ...]:
        profiles = MODELS[model_key].mig_profiles
        layout = self.rng.choice(_LAYOUTS)
        instances = tuple(MigInstance(_profile(profiles, size).name, start) for size, start in layout)
        self.profiles += [i.profile for i in instances]
        return instances

    def _partitionable_slices(self, node: GpuNode) -> list[dict]:
        """Dynamic MIG on 1.34: per GPU one slice with its counter set and the devices consuming it.

        Devices are sorted by name (the driver's order), so a full GPU ``gpu-<i>`` comes first.
        """
        model = node.gpu_model
        biggest = max(model.mig_profiles, key=lambda p: p.memory_slices)
        totals = {"multiprocessors": biggest.multiprocessors, "memory": biggest.memory_mib,
                  **{f"memory-slice-{i}": 1 for i in range(8)}}
        slices, devices = [], []
        capacity: dict[str, int] = {}
        for gpu in node.gpus:
            counter_set = f"gpu-{gpu.minor}-counter-set"
            for counter, total in totals.items():
                capacity[f"{counter_set}/{counter}"] = total
            full = copy_tree(full_gpu_device(self.name, node, gpu))  # read-only as published: changed below
            full["capacity"]["memory"] = {"value": binary_si(biggest.memory_mib)}
            del full["attributes"]["uuid"]
            full["consumesCounters"] = [{"counterSet": counter_set, "counters": _counters(totals)}]
            gpu_devices = [_Device(node.name, node.name, full, "gpu", _keyed(counter_set, totals))]
            for size, start in _PLACEMENTS:
                profile = _profile(model.mig_profiles, size)
                self.profiles.append(profile.name)
                dev = copy_tree(mig_device(self.name, node, gpu, MigInstance(profile.name, start)))
                del dev["attributes"]["uuid"]
                dev["capacity"] = {k: v for k, v in dev["capacity"].items() if not k.startswith("memorySlice")}
                used = {"multiprocessors": profile.multiprocessors, "memory": profile.memory_mib,
                        **{f"memory-slice-{i}": 1 for i in range(start, start + profile.memory_slices)}}
                dev["consumesCounters"] = [{"counterSet": counter_set, "counters": _counters(used)}]
                gpu_devices.append(_Device(node.name, node.name, dev, "mig", _keyed(counter_set, used)))
            gpu_devices.sort(key=lambda d: d.device["name"])
            devices += gpu_devices
            one = gpu_slice(self.name, GpuNode(node.name, node.model, node.driver_version, node.cuda_driver_version,
                                               (gpu,), node.addressing_mode, node.labels, node.pool_generation))
            one["metadata"]["name"] = f"{one['metadata']['name']}-{gpu.minor}"
            one["spec"]["pool"]["resourceSliceCount"] = len(node.gpus)
            one["spec"]["sharedCounters"] = [{"name": counter_set, "counters": _counters(totals)}]
            one["spec"]["devices"] = [d.device for d in gpu_devices]
            slices.append(one)
        self.devices[node.name] = devices
        self.capacity[node.name] = capacity
        return slices

    def _taint(self, rs: dict) -> None:
        for dev in rs["spec"]["devices"]:
            if self.rng.random() < 0.12:
                dev["taints"] = [{"key": self.rng.choice(TAINT_KEYS), "value": self.rng.choice(("1", "48", "true")),
                                  "effect": self.rng.choice(TAINT_EFFECTS)}]
                self.note("device taints")

    # --- classes ----------------------------------------------------------------------------

    def _classes(self) -> list[dict]:
        out = [device_class(f"{self.name}-any", "device.driver == 'gpu.nvidia.com'")]
        memory = self.rng.choice(("20Gi", "40Gi", "80Gi"))
        out.append(device_class(
            f"{self.name}-big",
            f"device.driver == 'gpu.nvidia.com' && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('{memory}')) >= 0",
        ))
        if self.rng.random() < 0.15:  # fails at run time on every full GPU: profile is a MIG attribute
            out.append(device_class(f"{self.name}-small-mig",
                                    "device.driver == 'gpu.nvidia.com' && "
                                    "device.attributes['gpu.nvidia.com'].profile.startsWith('1g')"))
            self.note("class selector that errors")
        return out

    # --- allocated claims ---------------------------------------------------------------------

    def _existing(self, node: str) -> list[dict]:
        """Claims already allocated on ``node``: a random share of its devices, within the counters."""
        share = self.rng.choice((0.0, 0.0, 0.25, 0.25, 0.5, 0.75))
        candidates = [d for d in self.devices[node] if self.rng.random() < share]
        used: dict[str, int] = {}
        taken = []
        for dev in candidates:
            if any(used.get(k, 0) + v > self.capacity[node].get(k, 0) for k, v in dev.counters.items()):
                continue
            for k, v in dev.counters.items():
                used[k] = used.get(k, 0) + v
            taken.append(dev)
        claims = []
        for index in range(0, len(taken), 3):
            group = taken[index:index + 3]
            claims.append(_allocated_claim(f"{node}-existing-{index // 3}", group, admin=False))
        if taken:
            self.note("existing allocations")
        if self.devices[node] and self.rng.random() < 0.2:
            dev = self.rng.choice(self.devices[node])
            claims.append(_allocated_claim(f"{node}-admin", [dev], admin=True))
            self.note("existing admin-access allocation")
        return claims

    # --- the pod's claims --------------------------------------------------------------------

    def _claims(self, classes: list[dict]) -> list[dict]:
        class_names = ["gpu.nvidia.com", "gpu.nvidia.com", *(c["metadata"]["name"] for c in classes)]
        if self.has_mig:
            class_names += ["mig.nvidia.com", "mig.nvidia.com"]
        claims = []
        for index in range(self.rng.choice((1, 1, 1, 1, 2))):
            requests = [self._request(f"r{i}", class_names) for i in range(self.rng.choice((1, 1, 1, 1, 2, 3)))]
            devices: dict = {"requests": requests}
            constraints = self._constraints(requests)
            if constraints:
                devices["constraints"] = constraints
            claims.append({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": f"{self.name}-c{index}"},
                "spec": {"devices": devices},
            })
        return claims

    def _request(self, name: str, class_names: list[str]) -> dict:
        if self.rng.random() < 0.2:
            self.note("firstAvailable")
            subs = []
            for i in range(self.rng.choice((2, 3))):
                sub = self._exactly(class_names, allow_admin=False)
                sub["name"] = f"s{i}"
                subs.append(sub)
            return {"name": name, "firstAvailable": subs}
        return {"name": name, "exactly": self._exactly(class_names, allow_admin=True)}

    def _exactly(self, class_names: list[str], allow_admin: bool) -> dict:
        rng = self.rng
        class_name = rng.choice(class_names)
        body: dict = {"deviceClassName": class_name}
        mode = rng.random()
        if mode < 0.15 and (self.all_beside_counters or not any(self.partitionable.values())):
            body["allocationMode"] = "All"
            self.note("allocationMode All")
        else:  # written out as the API server defaults them, so the objects can be used offline too
            body["allocationMode"] = "ExactCount"
            body["count"] = rng.choice((1, 1, 1, 1, 1, 2, 2, 3, 4, 8)) if mode < 0.97 else CLAIM_LIMIT + 1
            if body["count"] > CLAIM_LIMIT:
                self.note("over the claim limit")
        selector = self._selector(class_name)
        if selector:
            body["selectors"] = [{"cel": {"expression": selector}}]
        if allow_admin and rng.random() < 0.08:
            body["adminAccess"] = True
            self.note("admin access")
        if rng.random() < 0.3:
            body["tolerations"] = [self._toleration()]
            self.note("tolerations")
        return body

    def _selector(self, class_name: str) -> str | None:
        rng = self.rng
        choice = rng.random()
        attrs = "device.attributes['gpu.nvidia.com']"
        if choice < 0.35:
            return None
        if choice < 0.5:
            product = rng.choice([*self.products] * 3 + [m.product_name for m in MODELS.values()])
            return f"{attrs}.productName == '{product}'"
        if choice < 0.62:
            return f"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('{rng.choice(('10Gi', '20Gi', '40Gi', '80Gi'))}')) >= 0"
        if choice < 0.72:
            return f"{attrs}.cudaComputeCapability.isGreaterThan(semver('{rng.choice(('8.0.0', '8.9.0', '9.0.0'))}'))"
        if choice < 0.82 and class_name != "gpu.nvidia.com" and self.profiles:
            others = sorted({p.name for m in MODELS.values() for p in m.mig_profiles})
            return f"{attrs}.profile == '{rng.choice(self.profiles * 3 + others)}'"
        if choice < 0.9:  # a MIG attribute asked of full GPUs: "no such key" at run time
            self.note("request selector that errors")
            return f"{attrs}.profile != ''"
        kind = {"gpu.nvidia.com": "gpu", "mig.nvidia.com": "mig"}.get(class_name) or rng.choice(("gpu", "mig"))
        return f"{attrs}.type == '{kind if rng.random() < 0.8 else rng.choice(('gpu', 'mig'))}'"

    def _toleration(self) -> dict:
        rng = self.rng
        toleration: dict = {"key": rng.choice(TAINT_KEYS)}
        if rng.random() < 0.5:
            toleration["operator"] = "Exists"
        else:
            toleration["operator"] = "Equal"
            toleration["value"] = rng.choice(("1", "48", "true"))
        if rng.random() < 0.5:
            toleration["effect"] = rng.choice(TAINT_EFFECTS)
        return toleration

    def _constraints(self, requests: list[dict]) -> list[dict]:
        rng = self.rng
        if rng.random() > 0.35:
            return []
        names = [r["name"] for r in requests]
        attribute = rng.choice(("gpu.nvidia.com/productName", "resource.kubernetes.io/pcieRoot",
                                "gpu.nvidia.com/parentUUID", "gpu.nvidia.com/architecture"))
        constraint: dict = {}
        if len(names) > 1 and rng.random() < 0.5:
            constraint["requests"] = rng.sample(names, 2)
        if rng.random() < 0.3 and self.distinct:
            constraint["distinctAttribute"] = attribute
            self.note("distinctAttribute")
        else:
            constraint["matchAttribute"] = attribute
            self.note("matchAttribute")
        return [constraint]


SEARCH_BOUND = 20000


def _bound_search(claims: list[dict], devices: int) -> None:
    """Lower counts until the allocator's depth-first search stays small.

    The 1.34 allocator tries ordered picks of devices, request after request, and backtracks into
    earlier requests when a later one fails: ``count`` devices out of ``n`` can cost n!/(n-count)!
    tries, multiplied across requests. A pod asking 8 of 14 MIG devices and then a GPU the node
    lacks takes minutes (and the scheduler's filter timeout, 10 s, would end it). The bound is the
    product of those numbers over the pod's requests, each capped by the claim limit.
    """
    def bodies() -> list[dict]:
        return [b for claim in claims for r in claim["spec"]["devices"]["requests"]
                for b in ([r["exactly"]] if "exactly" in r else r["firstAvailable"])]

    def tries(body: dict) -> int:
        count = body.get("count", 1)
        if body.get("allocationMode") == "All" or count > CLAIM_LIMIT:
            return 1
        return math.perm(devices, min(count, devices))

    while math.prod(tries(b) for b in bodies()) > SEARCH_BOUND:
        counted = [b for b in bodies() if tries(b) > 1 and b.get("count", 1) > 1]
        if counted:
            biggest = max(counted, key=lambda b: b["count"])
            biggest["count"] //= 2
            continue
        longest = max(claims, key=lambda c: len(c["spec"]["devices"]["requests"]))
        if len(longest["spec"]["devices"]["requests"]) == 1:
            return
        dropped = longest["spec"]["devices"]["requests"].pop()["name"]
        for constraint in longest["spec"]["devices"].get("constraints", []):
            if dropped in constraint.get("requests", []):
                constraint.pop("requests")


def _profile(profiles, size: int):
    return next(p for p in profiles if p.name.startswith(f"{size}g."))


def _counters(amounts: dict[str, int]) -> dict[str, dict[str, str]]:
    return {k: {"value": binary_si(v) if k == "memory" else str(v)} for k, v in sorted(amounts.items())}


def _keyed(counter_set: str, amounts: dict[str, int]) -> dict[str, int]:
    return {f"{counter_set}/{k}": v for k, v in amounts.items()}


def _allocated_claim(name: str, devices: list[_Device], admin: bool) -> dict:
    """A claim whose status already holds an allocation of ``devices`` (as the scheduler wrote it)."""
    exactly: dict = {"deviceClassName": "gpu.nvidia.com" if devices[0].kind == "gpu" else "mig.nvidia.com",
                     "allocationMode": "ExactCount", "count": len(devices)}
    if admin:
        exactly["adminAccess"] = True
    results = []
    for dev in devices:
        result = {"request": "existing", "driver": GPU_DRIVER, "pool": dev.pool, "device": dev.device["name"]}
        if admin:
            result["adminAccess"] = True
        results.append(result)
    node = devices[0].node
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "existing", "exactly": exactly}]}},
        "status": {"allocation": {
            "devices": {"results": results},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
        }},
    }
