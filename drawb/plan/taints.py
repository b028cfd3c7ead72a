"""Device taints for people: every taint on the cluster's devices and what it reaches (``taint_uses``),
and what a new taint would do before it is written (``blast_radius``).

A taint reaches the claims allocated on its devices and the pods those claims are reserved for. A new
taint with effect NoExecute evicts the bound pods whose allocation results do not tolerate it for ever
(``drawb.alloc.eviction``); NoSchedule and NoExecute (every effect in 1.34) keep new allocations off its
devices, so a pending pod whose claims fit now only on those devices loses its only fit. Nodes whose
pools hold none of the devices see the same devices before and after, so they are looked at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from drawb.alloc import AllocationError
from drawb.alloc.claimindex import claim_index
from drawb.alloc.eviction import pods_of_claim, taint_delay
from drawb.alloc.rules import rules_for
from drawb.alloc.taintrules import rule_hits, taint_of, with_rule_taints
from drawb.alloc.taints import BLOCKING
from drawb.alloc.relevance import relevant_attributes
from drawb.alloc.verdicts import node_reason
from drawb.alloc.versions import flavor as resolve_flavor
from drawb.alloc.view import NodeView, PlanState
from drawb.plan.errors import ObjectNotFound
from drawb.plan.errors import NoClaims
from drawb.plan.workload import resolve

DeviceID = tuple[str, str, str]
Obj = Mapping[str, Any]


def device_text(device: DeviceID) -> str:
    """``driver/pool/device``."""
    return "/".join(device)


def object_text(obj: Obj) -> str:
    """``namespace/name``."""
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def taint_text(taint: Mapping[str, Any]) -> str:
    """``key=value:effect`` as kubectl writes node taints."""
    value = taint.get("value")
    return f"{taint.get('key', '')}{'=' + value if value else ''}:{taint.get('effect', '')}"


@dataclass(frozen=True)
class Objects:
    """What a taint can reach: the cluster's objects, under its version and gates."""

    nodes: Sequence[Obj]
    slices: Sequence[Obj]  # as published (DeviceTaintRules not applied)
    classes: Sequence[Obj]
    claims: Sequence[Obj]
    pods: Sequence[Obj]
    templates: Sequence[Obj]
    taint_rules: Sequence[Obj]  # the DeviceTaintRules the scheduler applies (none while its gate is off)
    kubernetes_version: str
    feature_gates: Mapping[str, bool] | None


def _claims_by_device(claims: Sequence[Obj]) -> Mapping[DeviceID, list[Obj]]:
    """The claims holding each device (from the one claim index the scheduler's view shares)."""
    by_device = claim_index(claims).by_device
    return _Holders(by_device)


class _Holders(Mapping):
    """``claim_index``'s per-device entries as claims alone."""

    def __init__(self, by_device: Mapping[DeviceID, list[tuple[Obj, bool]]]) -> None:
        self._by_device = by_device

    def __getitem__(self, device: DeviceID) -> list[Obj]:
        return [claim for claim, _ in self._by_device[device]]

    def __iter__(self):
        return iter(self._by_device)

    def __len__(self) -> int:
        return len(self._by_device)


def _pods_by_uid(pods: Iterable[Obj]) -> dict[str, Obj]:
    return {(p.get("metadata") or {}).get("uid", ""): p for p in pods}


def _reserved_pods(claim: Obj, pods_by_uid: Mapping[str, Obj]) -> list[Obj]:
    refs = (claim.get("status") or {}).get("reservedFor") or ()
    return [pods_by_uid[r["uid"]] for r in refs if r.get("uid") in pods_by_uid]


@dataclass
class TaintUse:
    """One taint of one source (a ResourceSlice or a DeviceTaintRule) and what it reaches."""

    source: str  # ResourceSlice/NAME or DeviceTaintRule/NAME
    taint: dict
    devices: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    pods: list[str] = field(default_factory=list)
    status: str = ""  # a DeviceTaintRule's EvictionInProgress condition, as the controller wrote it
    ids: list[DeviceID] = field(default_factory=list, repr=False)


def taint_uses(slices: Sequence[Obj], taint_rules: Sequence[Obj], claims: Sequence[Obj], pods: Sequence[Obj]) -> list[TaintUse]:
    """Every taint, those of slices first (in slice order), then those of DeviceTaintRules."""
    uses: dict[tuple[str, str], TaintUse] = {}
    for rs in slices:
        spec = rs.get("spec") or {}
        driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
        for device in spec.get("devices") or ():
            for taint in device.get("taints") or ():
                source = f"ResourceSlice/{(rs.get('metadata') or {}).get('name', '')}"
                use = uses.setdefault((source, taint_text(taint)), TaintUse(source, dict(taint)))
                use.ids.append((driver, pool, device.get("name", "")))
    for rule in taint_rules:
        source = f"DeviceTaintRule/{(rule.get('metadata') or {}).get('name', '')}"
        uses[(source, "")] = TaintUse(source, taint_of(rule), status=_eviction_status(rule))
    for rule, rs, device in rule_hits(slices, taint_rules):
        spec = rs.get("spec") or {}
        uses[(f"DeviceTaintRule/{rule['metadata']['name']}", "")].ids.append(
            (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""), device.get("name", "")))
    by_device = _claims_by_device(claims)
    by_uid = _pods_by_uid(pods)
    for use in uses.values():
        use.devices = [device_text(d) for d in use.ids]
        reached = {object_text(c): c for d in use.ids for c in by_device.get(d, ())}
        use.claims = sorted(reached)
        use.pods = sorted({object_text(p) for c in reached.values() for p in _reserved_pods(c, by_uid)})
    return list(uses.values())


def _eviction_status(rule: Obj) -> str:
    for condition in (rule.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "EvictionInProgress":
            return f"EvictionInProgress={condition.get('status')}: {condition.get('message', '')}".strip()
    return ""


@dataclass
class BlastRadius:
    """What a new taint on ``devices`` would reach."""

    taint: dict
    devices: list[str]
    claims: list[str]
    evicted: dict[str, float]  # pod -> seconds after the taint is added that it is evicted (0: at once)
    losing_fit: list[str]  # pending pods that fit now only on the devices
    blocks_allocation: bool  # the scheduler keeps new allocations off the devices
    evicts: bool  # the effect evicts (NoExecute)

    def by_namespace(self) -> dict[str, dict[str, list[str]]]:
        """Per namespace: its claims, evicted pods and pending pods losing their fit."""
        out: dict[str, dict[str, list[str]]] = {}
        for what, names in (("claims", self.claims), ("evicted_pods", sorted(self.evicted)),
                            ("pending_pods_losing_fit", self.losing_fit)):
            for name in names:
                namespace = name.split("/", 1)[0]
                out.setdefault(namespace, {"claims": [], "evicted_pods": [], "pending_pods_losing_fit": []})[what].append(name)
        return dict(sorted(out.items()))


def blast_radius(objects: Objects, devices: Sequence[DeviceID], taint: Mapping[str, Any],
                 before: Callable[[], PlanState] | None = None) -> BlastRadius:
    """What ``taint`` on ``devices`` reaches (``before``: the cluster's PlanState now, when the caller has it)."""
    return _blast_radius(objects, devices, taint, before)


def _blast_radius(objects: Objects, devices: Sequence[DeviceID], taint: Mapping[str, Any],
                  before: Callable[[], PlanState] | None) -> BlastRadius:
    chosen = set(devices)
    flavor = resolve_flavor(objects.kubernetes_version, objects.feature_gates)
    alloc_rules = rules_for(flavor)
    effect = taint.get("effect") or ""
    blocks = alloc_rules.taints and (effect in BLOCKING or alloc_rules.taint_effects_all)
    evicts = effect == "NoExecute" and dict(flavor.gates).get("DRADeviceTaints", False)
    by_device = _claims_by_device(objects.claims)
    claims = {object_text(c): c for d in devices for c in by_device.get(d, ())}
    evicted: dict[str, float] = {}
    if evicts:
        by_uid = _pods_by_uid(objects.pods)
        for claim in claims.values():
            delay = _claim_delay(claim, chosen, taint)
            if delay is None:
                continue
            for pod in pods_of_claim(claim, by_uid):
                name = object_text(pod)
                evicted[name] = min(delay, evicted.get(name, delay))
    losing = _losing_fit(objects, chosen, taint, before) if blocks else []
    return BlastRadius(dict(taint), [device_text(d) for d in devices], sorted(claims), dict(sorted(evicted.items())),
                       losing, blocks, evicts)


def _claim_delay(claim: Obj, chosen: set[DeviceID], taint: Mapping[str, Any]) -> float | None:
    best = None
    for result in (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or ():
        if (result.get("driver", ""), result.get("pool", ""), result.get("device", "")) not in chosen:
            continue
        delay = taint_delay(taint, result.get("tolerations") or ())
        if delay is not None and (best is None or delay < best):
            best = delay
    return best


def _pending(pods: Iterable[Obj]) -> list[Obj]:
    return [p for p in pods if not (p.get("spec") or {}).get("nodeName") and (p.get("spec") or {}).get("resourceClaims")
            and not (p.get("metadata") or {}).get("deletionTimestamp")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]


def _tainted(slices: Sequence[Obj], chosen: set[DeviceID], taint: Mapping[str, Any]) -> list[Obj]:
    """``slices`` with ``taint`` added to the chosen devices (as a DeviceTaintRule per device would)."""
    rules = [{"metadata": {"name": ""}, "spec": {"deviceSelector": {"driver": d, "pool": p, "device": n}, "taint": dict(taint)}}
             for d, p, n in sorted(chosen)]
    return with_rule_taints(slices, rules)


def _losing_fit(objects: Objects, chosen: set[DeviceID], taint: Mapping[str, Any],
                before: Callable[[], PlanState] | None) -> list[str]:
    pending = _pending(objects.pods)
    if not pending or not chosen:
        return []
    state = before() if before is not None else PlanState(
        nodes=objects.nodes, slices=with_rule_taints(objects.slices, objects.taint_rules), classes=objects.classes,
        claims=objects.claims, kubernetes_version=objects.kubernetes_version, feature_gates=objects.feature_gates)
    publishing = state.nodes_publishing({(d, p) for d, p, _ in chosen})
    affected = [n for n in state.nodes if publishing is None or n["metadata"]["name"] in publishing]
    find = _finder(objects, pending)
    answers: dict[str, bool] = {}  # pods asking alike (the same claims and node rules) get the same answer
    losing = []
    for pod in pending:
        meta = pod["metadata"]
        try:
            workload = resolve("Pod", meta["name"], meta.get("namespace", ""), find)
        except (NoClaims, ObjectNotFound):
            continue  # a claim or template is missing: it fits nowhere now
        allocating = [c for c in workload.claims if not (c.get("status") or {}).get("allocation")]
        if not allocating:
            continue
        key = _alike(workload, allocating)
        if key not in answers:
            answers[key] = (_fits_on(state, workload, allocating, affected)
                            and not _fits_on(state, workload, allocating, affected, (chosen, taint))
                            and not _fits_elsewhere(state, workload, allocating, publishing))
        if answers[key]:
            losing.append(object_text(pod))
    return sorted(losing)


def _alike(workload, allocating: list[dict]) -> str:
    """What a pending pod's fit depends on: its node rules, its claims' specs, the claims it holds."""
    spec = workload.pod.get("spec") or {}
    held = [object_text(c) for c in workload.claims if c not in allocating]
    return json.dumps([{k: spec.get(k) for k in ("nodeSelector", "affinity", "tolerations")},
                       [c.get("spec") for c in allocating], held], sort_keys=True, default=str)


def _fits_on(state: PlanState, workload, allocating: list[dict], nodes: Sequence[Obj],
             tainting: tuple[set[DeviceID], Mapping[str, Any]] | None = None) -> bool:
    """Whether the claims fit on one of ``nodes`` now (``tainting``: with the new taint on its devices)."""
    held = [c for c in workload.claims if c not in allocating]
    for node in nodes:
        if node_reason(workload.pod, node, held) is not None:
            continue
        view = state.view(node)
        if tainting is not None:
            view = NodeView(node, _tainted(view.slices, *tainting), view.pools, view.allocated, view.shared)
        try:
            if state.allocate(allocating, view) is not None:
                return True
        except AllocationError:  # the scheduler fails the attempt at that node
            return False
    return False


def _fits_elsewhere(state: PlanState, workload, allocating: list[dict], publishing: set[str] | None) -> bool:
    """Whether the claims fit now on a node that does not see the tainted pools (the nodes with the fewest
    devices in use tried first, alike nodes once)."""
    if publishing is None:
        return False
    held = [c for c in workload.claims if c not in allocating]
    relevant = relevant_attributes(allocating, state.class_by_name, state.kubernetes_version, state.feature_gates)
    views = [state.view(n) for n in state.nodes if n["metadata"]["name"] not in publishing]
    tried: dict[tuple, bool] = {}
    for view in sorted(views, key=state.devices_in_use):
        if node_reason(workload.pod, view.node, held) is not None:
            continue
        signature = state.signature(view, relevant)
        if signature not in tried:
            try:
                tried[signature] = state.allocate(allocating, view) is not None
            except AllocationError:  # the scheduler fails the attempt at that node: it fits nowhere
                return False
        if tried[signature]:
            return True
    return False


def _finder(objects: Objects, pending: Sequence[Obj]):
    """Objects by kind, namespace and name: the pending pods, and the claims and templates of their namespaces."""
    namespaces = {(p.get("metadata") or {}).get("namespace", "") for p in pending}
    index: dict[tuple[str, str, str], Obj] = {}
    for kind, items in (("Pod", pending), ("ResourceClaim", objects.claims), ("ResourceClaimTemplate", objects.templates)):
        for obj in items:
            meta = obj.get("metadata") or {}
            if meta.get("namespace", "") in namespaces:
                index[(kind, meta.get("namespace", ""), meta.get("name", ""))] = obj

    def find(kind: str, name: str, namespace: str) -> dict | None:
        return index.get((kind, namespace, name))  # type: ignore[return-value]

    return find
