"""Read a connected cluster's DRA state into a Snapshot: objects, server version, probed gates."""

from __future__ import annotations

from drawb.cluster.protocol import Cluster, ClusterError
from drawb.doctor.probes import DEVICE_STATUS_GATE, OFF, ON, PROBES, run_probe
from drawb.cluster.snapshot.document import OBJECT_KINDS, Snapshot, minor_version, nearest_rules
from drawb.snapshot.scrub import select_objects
from drawb.versions import Rules


def probe_gates(cluster: Cluster, rules: Rules, namespace: str) -> tuple[dict[str, bool], dict[str, str]]:
    """Every gate that changes what the API server keeps (``rules.field_gates``): its state and how it is
    known: a dry-run probe, the API server's metric, or the default."""
    defaults = rules.defaults()
    gates = {gate: defaults[gate] for gate in rules.field_gates}
    sources = dict.fromkeys(rules.field_gates, "default")
    metric = cluster.feature_gates_metric() or {}
    for gate in rules.field_gates:
        if gate in metric:
            gates[gate], sources[gate] = bool(metric[gate]), "metric"
    for probe in PROBES:
        outcome = run_probe(cluster, probe, namespace)
        if outcome.state in (ON, OFF):
            gates[probe.gate], sources[probe.gate] = outcome.state == ON, "probed"
    if sources.get("DRADeviceBindingConditions") == "probed" and gates["DRADeviceBindingConditions"]:
        gates[DEVICE_STATUS_GATE], sources[DEVICE_STATUS_GATE] = True, "probed"  # the probe implies it
    return gates, sources


def capture(cluster: Cluster, *, namespace: str = "default") -> Snapshot:
    """The DRA state of ``cluster`` now (probes that need a namespace send their dry runs to ``namespace``).
    Pods and claim templates RBAC lets drawb read in ``namespace`` alone are those of ``namespace``, said in a note."""
    from drawb.cluster.refusal import RbacRefused

    version = cluster.server_version()
    notes: list[str] = []
    listed = {}
    for kind in OBJECT_KINDS:
        try:
            listed[kind] = cluster.list(kind)
        except ClusterError as exc:
            if isinstance(exc, RbacRefused) and kind in ("Pod", "ResourceClaimTemplate"):
                listed[kind] = cluster.list(kind, namespace)
                notes.append(f"{kind}s are those of namespace {namespace} only ({exc.verb} at the cluster scope was "
                             "refused): a replay shows none of another namespace; claims of every namespace are in, "
                             "so which devices are taken is complete")
                continue
            if kind not in ("Namespace", "ResourceClaimTemplate"):
                raise
            listed[kind] = []
            notes.append(f"{kind}s could not be listed ({exc}); the snapshot has none"
                         + ("; namespace labels (admin access) are unknown" if kind == "Namespace" else ""))
    kubernetes_version = minor_version(version)
    gates, sources = probe_gates(cluster, nearest_rules(version), namespace)
    unknown = sorted(g for g, how in sources.items() if how == "default")
    if unknown:
        notes.append(f"feature gate(s) {', '.join(unknown)} could not be probed: Kubernetes "
                     f"{kubernetes_version}'s defaults are taken")
    return Snapshot(
        objects=select_objects(listed),
        kubernetes_version=kubernetes_version,
        server_version=version,
        feature_gates=gates,
        gate_sources=sources,
        source=cluster.description,
        notes=notes,
    )
