"""Which road fits this cluster: claims (the rewritten manifests), or the extended resource served
through a DeviceClass's ``extendedResourceName`` (DRAExtendedResource), and is either satisfiable now.

"Satisfiable now" asks drawb.alloc, on every node that the scheduler's NodeUnschedulable,
TaintToleration and NodeAffinity filters admit the pod to, with the devices other claims hold,
the question the scheduler's DRA plugin asks; CPU, memory and pod counts are not part of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from drawb.api.nodeaffinity import node_filter
from drawb.api.quantity import Quantity, QuantityError
from drawb.cluster.protocol import Cluster, ClusterError
from drawb.doctor.checks import GPU_DRIVER, device_plugin_gpus
from drawb.doctor.probes import OFF, ON, PROBES, UNKNOWN, run_probe
from drawb.migrate.blockers import Blocker, excluded, no_fit
from drawb.migrate.claims import Plan, claim_spec, effective_devices, mapping_class
from drawb.migrate.legacy import Device, Workload
from drawb.migrate.rewrite import plain
from drawb import versions

EXTENDED_GATE = "DRAExtendedResource"


@dataclass(frozen=True)
class Fit:
    """Where a pod's claims could be allocated now."""

    nodes: tuple[str, ...]  # nodes where every claim fits
    of: int  # nodes with DRA devices that were tried
    error: str | None = None  # the allocator's (the scheduler's) message, when it refused the claims
    blocker: Blocker | None = None  # what keeps the claims from every node now

    def describe(self) -> str:
        """``fits now on 3 of the 4 nodes it may run on (a, b, c)`` or why not."""
        if self.error:
            return f"no: {self.error}"
        if not self.nodes:
            return f"no: {self.blocker.text if self.blocker else 'no node to try'}"
        shown = ", ".join(self.nodes[:3]) + (f", +{len(self.nodes) - 3} more" if len(self.nodes) > 3 else "")
        return f"fits now on {len(self.nodes)} of the {self.of} nodes it may run on ({shown})"


@dataclass
class ClusterFacts:
    """What migrate reads from the cluster once: gate state, classes, slices, nodes, allocated claims."""

    description: str
    gate: str  # on, off or unknown
    gate_evidence: str
    classes: list[dict]
    slices: list[dict]
    nodes: list[dict]
    allocated: list[dict]
    kubernetes_version: str
    warnings: list[str] = field(default_factory=list)

    def gate_name(self) -> str:
        """``DRAExtendedResource on``."""
        return f"{EXTENDED_GATE} {self.gate}"

    def classes_for(self, resource: str) -> list[str]:
        """The DeviceClasses whose ``extendedResourceName`` is ``resource``."""
        return sorted(c["metadata"]["name"] for c in self.classes
                      if (c.get("spec") or {}).get("extendedResourceName") == resource)

    def class_names(self) -> set[str]:
        """Every DeviceClass name."""
        return {c["metadata"]["name"] for c in self.classes}

    def plugin_nodes(self, resource: str) -> list[str]:
        """Nodes whose device plugin offers ``resource`` (``status.allocatable``)."""
        return [n["metadata"]["name"] for n in self.nodes
                if _number(((n.get("status") or {}).get("allocatable") or {}).get(resource)) > 0]


def _number(value: object) -> float:
    try:
        return Quantity.parse(str(value)).as_approximate_float() if value is not None else 0.0
    except QuantityError:
        return 0.0


def _gate(cluster: Cluster, namespace: str, classes: list[dict]) -> tuple[str, str]:
    outcome = run_probe(cluster, PROBES[0], namespace)
    if outcome.state != UNKNOWN:
        return outcome.state, outcome.evidence
    if any((c.get("spec") or {}).get("extendedResourceName") for c in classes):
        return ON, "a DeviceClass keeps spec.extendedResourceName (the API server drops it while the gate is off)"
    metric = cluster.feature_gates_metric() or {}
    if EXTENDED_GATE in metric:
        return (ON if metric[EXTENDED_GATE] else OFF), f"kubernetes_feature_enabled{{name=\"{EXTENDED_GATE}\"}}"
    return UNKNOWN, outcome.evidence


def read_facts(cluster: Cluster, namespace: str) -> ClusterFacts:
    """Read what the roads depend on; warn about class conflicts and device-plugin overlap."""
    classes = cluster.list("DeviceClass")
    slices = cluster.list("ResourceSlice")
    try:
        nodes = cluster.list("Node")
    except ClusterError:
        nodes = []
    claims = [c for c in cluster.list("ResourceClaim") if (c.get("status") or {}).get("allocation")]
    gate, evidence = _gate(cluster, namespace, classes)
    facts = ClusterFacts(cluster.description, gate, evidence, classes, slices, nodes, claims,
                         _rules_minor(cluster.server_version()))
    facts.warnings += conflict_warnings(classes)
    facts.warnings += overlap_warnings(nodes, slices)
    return facts


def _rules_minor(server_version: str) -> str:
    """The minor whose rules apply to the server (drawb's default for a version it cannot read)."""
    try:
        rules, _ = versions.known_rules(server_version)
    except versions.NotAKubernetesVersion:
        rules = None
    return (rules or versions.rules(versions.DEFAULT)).minor


def conflict_warnings(classes: Iterable[dict]) -> list[str]:
    """One warning per extended resource name that two or more DeviceClasses claim."""
    owners: dict[str, list[str]] = {}
    for c in classes:
        name = (c.get("spec") or {}).get("extendedResourceName")
        if name:
            owners.setdefault(name, []).append(c["metadata"]["name"])
    return [f"DeviceClasses {', '.join(sorted(names))} all set extendedResourceName: {resource}; only one of them "
            "can serve it (the NVIDIA chart sets nvidia.com/gpu on gpu.nvidia.com by default): remove it from the others"
            for resource, names in sorted(owners.items()) if len(names) > 1]


def overlap_warnings(nodes: Iterable[dict], slices: Iterable[dict]) -> list[str]:
    """One warning per node that offers GPUs through the device plugin and through DRA slices."""
    dra_nodes = {(s.get("spec") or {}).get("nodeName") for s in slices if (s.get("spec") or {}).get("driver") == GPU_DRIVER
                 and (s.get("spec") or {}).get("devices")}
    return [f"node {n['metadata']['name']} offers {device_plugin_gpus(n):g} nvidia.com/gpu through the device plugin "
            f"and GPUs through {GPU_DRIVER} slices: the same GPU can be given twice; run one of the two per node"
            for n in nodes if device_plugin_gpus(n) > 0 and n["metadata"]["name"] in dra_nodes]


def _admits(pod_spec: Mapping, node: dict | None) -> bool:
    if node is None:
        return True
    return node_filter({"spec": plain(pod_spec)}, node) is None


def _fit(facts: ClusterFacts, pod_spec: Mapping, specs: list[dict], extra_classes: list[dict] = ()) -> Fit:
    from drawb.alloc import AllocationError, allocate

    claims = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
               "metadata": {"name": f"drawb-migrate-{i}", "namespace": "drawb-migrate", "uid": f"drawb-migrate-{i}"},
               "spec": spec} for i, spec in enumerate(specs)]
    by_node: dict[str | None, list[dict]] = {}
    for s in facts.slices:
        by_node.setdefault((s.get("spec") or {}).get("nodeName"), []).append(s)
    nodes = {n["metadata"]["name"]: n for n in facts.nodes}
    with_devices = sorted(n for n in by_node if n is not None)
    names = [n for n in with_devices if _admits(pod_spec, nodes.get(n))]
    classes = [*facts.classes, *extra_classes]

    def fits(node: dict, allocated: list[dict]) -> bool:
        name = node["metadata"]["name"]
        return allocate(claims, node=node, slices=[*by_node[name], *by_node.get(None, [])], classes=classes,
                        allocated=allocated, kubernetes_version=facts.kubernetes_version) is not None

    pod = {"spec": plain(pod_spec)}
    if not names:
        none = Blocker("no node has DRA devices", "no node has DRA devices")
        return Fit((), 0, blocker=excluded(pod, nodes, with_devices) if with_devices else none)
    try:
        found = tuple(n for n in names if fits(nodes.get(n) or {"metadata": {"name": n}}, facts.allocated))
        if found:
            return Fit(found, len(names))
        others = [n for n in with_devices if n not in names]
        return Fit((), len(names), blocker=no_fit(pod, nodes, names, others, facts.allocated,
                                                           lambda n: _pools(by_node.get(n, [])), fits))
    except AllocationError as exc:
        return Fit((), len(names), str(exc))


def _pools(slices: list[dict]) -> set[tuple[str, str]]:
    return {((s.get("spec") or {}).get("driver"), ((s.get("spec") or {}).get("pool") or {}).get("name")) for s in slices}


@dataclass(frozen=True)
class Roads:
    """The two roads for one workload and the one drawb recommends."""

    claims: str  # the rewritten manifests: can they be allocated now
    extended: str  # the legacy manifest served through extendedResourceName
    recommended: str
    mapping_classes: tuple[dict, ...]  # DeviceClasses to create for the extended road (none when one exists)


def assess(facts: ClusterFacts, workload: Workload, plan: Plan, pod_spec: Mapping) -> Roads:
    """Both roads for ``workload`` (whose pod spec is ``pod_spec``) on this cluster."""
    missing = sorted({d.device_class for c in plan.claims for d, _ in c.requests} - facts.class_names())
    claims_fit = _fit(facts, pod_spec, [claim_spec(c) for c in plan.claims])
    claims = (f"no: DeviceClass {', '.join(missing)} does not exist here" if missing else claims_fit.describe())

    wanted = effective_devices(workload)
    classes_by_device: dict[Device, list[str]] = {d: facts.classes_for(d.resource) for d in wanted}
    to_create = tuple(mapping_class(d) for d, names in classes_by_device.items() if not names)
    served = "; ".join(f"{d.resource} -> " + (", ".join(names) if names else f"(new) {mapping_class(d)['metadata']['name']}")
                       for d, names in classes_by_device.items())
    if facts.gate == OFF:
        extended = f"no: {EXTENDED_GATE} is off ({facts.gate_evidence})"
    else:
        spec = {"devices": {"requests": [
            {"name": d.request_name, "exactly": {"deviceClassName": (names[0] if names else mapping_class(d)["metadata"]["name"]),
                                                 "count": n}}
            for (d, n), names in zip(wanted.items(), classes_by_device.values())]}}
        fit = _fit(facts, pod_spec, [spec], list(to_create))
        prefix = "gate unknown, " if facts.gate == UNKNOWN else ""
        extended = f"{prefix}{served}: {fit.describe()}"
        if any(len(n) > 1 for n in classes_by_device.values()):
            extended += " (several classes claim one name: see the warnings)"
    plugin = sorted({n for d in wanted for n in facts.plugin_nodes(d.resource)})
    if facts.gate == ON and not to_create and "fits now" in extended:
        recommended = "extended resource: runs unchanged through " + ", ".join(
            names[0] for names in classes_by_device.values())
    elif "fits now" in claims:
        recommended = "claims: apply the rewritten manifests"
    elif facts.gate != OFF and "fits now" in extended:
        recommended = "extended resource: create the DeviceClass shown, the manifest stays as it is"
    elif plugin:
        recommended = f"keep the device plugin for now: {', '.join(plugin[:3])} offer {', '.join(d.resource for d in wanted)}"
    elif missing:
        recommended = f"claims: create DeviceClass {', '.join(missing)} (the NVIDIA DRA driver's chart does), then apply"
    else:
        blocker = claims_fit.blocker.short if claims_fit.blocker else f"the allocator refuses them: {claims_fit.error}"
        recommended = f"claims: apply the rewritten manifests once this no longer holds: {blocker}"
    return Roads(claims, extended, recommended, to_create if facts.gate != OFF else ())
