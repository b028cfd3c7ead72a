"""The doctor's read-only checks of what the cluster holds: version, API, classes, slices, pods."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from drawb.api.quantity import Quantity, QuantityError
from drawb.doctor.report import FAIL, PASS, WARN, Report
from drawb.inventory.pools import pool_states
from drawb.versions import Rules, known_rules, parse
from drawb.versions.parse import NotAKubernetesVersion

GPU_DRIVER = "gpu.nvidia.com"
NVIDIA_CLASSES = {
    "gpu": "gpu.nvidia.com",
    "mig": "mig.nvidia.com",
    "vfio": "vfio.gpu.nvidia.com",
    "compute-domain": "compute-domain-default-channel.nvidia.com",
}
DEVICE_PLUGIN_RESOURCE = "nvidia.com/gpu"
_GPU_LABELS = ("nvidia.com/gpu.present", "feature.node.kubernetes.io/pci-10de.present")
_GPU_LABEL_KEYS = ("nvidia.com/gpu.product", "nvidia.com/gpu.count")
BUILTIN_PRIORITY_CLASSES = {"system-cluster-critical", "system-node-critical"}


@dataclass
class Snapshot:
    """Everything the checks read, listed once."""

    nodes: list[dict]
    slices: list[dict]
    classes: list[dict]
    claims: list[dict]
    pods: list[dict]
    priority_classes: list[dict] | None  # None: could not be listed
    problems: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # kind -> what RBAC refused


def check_version(report: Report, version: str) -> Rules | None:
    """Server version at least 1.34, and what DRA behaviour follows from it (the rules of its minor)."""
    try:
        parsed = parse(version)
    except NotAKubernetesVersion:
        parsed = None
    if parsed is None or parsed.major != 1:
        report.add("server version", WARN, f"the API server reports {version!r}, which is not a 1.x version",
                   "check that the kubeconfig points at a Kubernetes API server")
        return None
    rules, newer = known_rules(parsed)
    if rules is None:
        report.add("server version", FAIL,
                   f"{version}: resource.k8s.io/v1 and DRA on by default need Kubernetes 1.34 "
                   f"(1.32/1.33 serve DRA only as beta, behind the DynamicResourceAllocation gate)",
                   "upgrade the control plane and kubelets to 1.34 or newer")
        return None
    alpha = sorted(name for name, gate in rules.gates.items() if gate.stage == "alpha")
    on = sorted(name for name, gate in rules.gates.items() if gate.default)
    behaviour = (f"{version}: DRA is GA (resource.k8s.io/v1); on by default: {', '.join(on)}"
                 + (f"; alpha, off unless enabled: {', '.join(alpha)}" if alpha else ""))
    if newer:
        report.add("server version", WARN, behaviour + f"; drawb knows DRA up to {rules.minor} and checks with its rules",
                   "newer behaviour is not modelled; trust the gate probes below over version defaults")
    else:
        report.add("server version", PASS, behaviour)
    return rules


def check_api(report: Report, versions: list[str], rules: Rules | None) -> bool:
    """``resource.k8s.io/v1`` served, and which beta versions are served beside it (``rules``: the server's minor)."""
    betas = [v for v in versions if v != "v1"]
    if "v1" not in versions:
        served = f"serves only {', '.join(versions)}" if versions else "serves no version of resource.k8s.io"
        report.add("resource.k8s.io API", FAIL, f"the API server {served}",
                   "Kubernetes 1.34+ serves resource.k8s.io/v1 by default; if it was turned off, remove "
                   "resource.k8s.io/v1=false from kube-apiserver's --runtime-config")
        return False
    default = f"the {rules.minor} default" if rules else "the default"
    also = f"; also served: {', '.join(betas)}" if betas else f"; no beta version is served ({default})"
    report.add("resource.k8s.io API", PASS, "resource.k8s.io/v1 is served" + also)
    return True


def check_classes(report: Report, snapshot: Snapshot) -> None:
    """The NVIDIA DeviceClasses present; none at all means the driver or its CDI setup is missing."""
    names = {c["metadata"]["name"] for c in snapshot.classes}
    present = {short: name for short, name in NVIDIA_CLASSES.items() if name in names}
    missing = {short: name for short, name in NVIDIA_CLASSES.items() if name not in names}
    others = sorted(n for n in names if not n.endswith("nvidia.com"))
    if not present:
        seen = f"; other classes: {', '.join(others)}" if others else "; no DeviceClass at all"
        report.add("NVIDIA DeviceClasses", FAIL, f"none of {', '.join(NVIDIA_CLASSES.values())}{seen}",
                   "install the NVIDIA DRA driver (helm chart dra-driver-nvidia-gpu, resources.gpus.enabled=true); "
                   "if it is installed, its CDI setup failed: check the kubelet-plugin pods' logs")
        return
    found = ", ".join(f"{short} ({name})" for short, name in present.items())
    if "gpu" not in present:
        report.add("NVIDIA DeviceClasses", FAIL, f"present: {found}; missing: gpu.nvidia.com",
                   "GPU resources are disabled in the driver: install it with resources.gpus.enabled=true")
    elif missing:
        report.add("NVIDIA DeviceClasses", PASS,
                   f"present: {found}; not installed: {', '.join(missing.values())} (optional features)")
    else:
        report.add("NVIDIA DeviceClasses", PASS, f"present: {found}")


def _quantity(value: object) -> float:
    try:
        return Quantity.parse(str(value)).as_approximate_float() if value is not None else 0.0
    except (QuantityError, ValueError):
        return 0.0


def device_plugin_gpus(node: dict) -> float:
    """How many ``nvidia.com/gpu`` the node's device plugin offers (its allocatable)."""
    return _quantity(((node.get("status") or {}).get("allocatable") or {}).get(DEVICE_PLUGIN_RESOURCE))


def gpu_node_reason(node: dict) -> str | None:
    """Why a node looks like a GPU node (an NVIDIA/GFD/NFD label, or the device plugin), or None."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    for key in _GPU_LABELS:
        if labels.get(key) == "true":
            return f"label {key}=true"
    for key in _GPU_LABEL_KEYS:
        if key in labels:
            return f"label {key}={labels[key]}"
    if labels.get("cloud.google.com/gke-accelerator", "").startswith("nvidia"):
        return f"label cloud.google.com/gke-accelerator={labels['cloud.google.com/gke-accelerator']}"
    if device_plugin_gpus(node) > 0:
        return f"allocatable {DEVICE_PLUGIN_RESOURCE}: {node['status']['allocatable'][DEVICE_PLUGIN_RESOURCE]}"
    return None


def _slices_by_node(slices: list[dict]) -> dict[str, dict[str, int]]:
    """node -> driver -> devices published in slices naming that node."""
    found: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for s in slices:
        spec = s.get("spec") or {}
        if spec.get("nodeName"):
            found[spec["nodeName"]][spec.get("driver", "")] += len(spec.get("devices") or [])
    return found


def check_gpu_nodes(report: Report, snapshot: Snapshot) -> None:
    """Every node that looks like a GPU node has ResourceSlices of the GPU driver."""
    by_node = _slices_by_node(snapshot.slices)
    gpu_nodes = {n["metadata"]["name"]: r for n in snapshot.nodes if (r := gpu_node_reason(n))}
    if not gpu_nodes:
        report.add("GPU nodes publish slices", WARN, f"no node looks like a GPU node (no {_GPU_LABELS[0]} or "
                   f"{_GPU_LABELS[1]} label, no GFD labels, no allocatable {DEVICE_PLUGIN_RESOURCE})",
                   "label GPU nodes with NFD and GPU Feature Discovery (the NVIDIA DRA driver's kubelet plugin "
                   "is scheduled by those labels)")
        return
    without = {n: r for n, r in gpu_nodes.items() if not by_node.get(n, {}).get(GPU_DRIVER)}
    for node, reason in sorted(without.items()):
        other = {d: c for d, c in by_node.get(node, {}).items() if d != GPU_DRIVER}
        seen = f"; only slices of {', '.join(sorted(other))}" if other else ""
        report.add(f"slices on {node}", FAIL,
                   f"{node} looks like a GPU node ({reason}) but no {GPU_DRIVER} ResourceSlice names it{seen}",
                   f"check the NVIDIA DRA driver's kubelet plugin on {node}: `kubectl get pods -A -o wide "
                   f"--field-selector spec.nodeName={node}` and its logs (driver library found? "
                   "resources.gpus.enabled?)")
    with_slices = sorted(set(gpu_nodes) - set(without))
    if with_slices:
        devices = sum(by_node[n][GPU_DRIVER] for n in with_slices)
        report.add("GPU nodes publish slices", PASS if not without else WARN,
                   f"{len(with_slices)} of {len(gpu_nodes)} GPU nodes publish {GPU_DRIVER} slices "
                   f"({devices} devices): {', '.join(with_slices)}")


@dataclass(frozen=True)
class _Header:
    name: str
    driver: str
    pool: str
    generation: int
    count: int


def _headers(slices: list[dict]) -> list[_Header]:
    out = []
    for s in slices:
        spec, pool = s.get("spec") or {}, (s.get("spec") or {}).get("pool") or {}
        out.append(_Header(s["metadata"]["name"], spec.get("driver", ""), pool.get("name", ""),
                           int(pool.get("generation") or 0), int(pool.get("resourceSliceCount") or 0)))
    return out


def check_pools(report: Report, snapshot: Snapshot) -> None:
    """Pools complete (all ``resourceSliceCount`` slices of the newest generation) and generations consistent."""
    headers = _headers(snapshot.slices)
    if not headers:
        report.add("pools", WARN, "no ResourceSlice in the cluster", "install a DRA driver (see NVIDIA DeviceClasses)")
        return
    states = pool_states(headers)
    bad = False
    for (driver, pool), state in sorted(states.items()):
        mine = [h for h in headers if (h.driver, h.pool) == (driver, pool)]
        newest = [h for h in mine if h.generation == state.generation]
        stale = sorted({h.generation for h in mine if h.generation < state.generation})
        counts = sorted({h.count for h in newest})
        if len(counts) > 1:
            bad = True
            report.add(f"pool {driver}/{pool}", FAIL,
                       f"generation {state.generation}: its slices disagree on resourceSliceCount ({counts})",
                       "the driver published an inconsistent pool; restart its kubelet plugin on that node")
        elif not state.complete:
            bad = True
            report.add(f"pool {driver}/{pool}", FAIL,
                       f"generation {state.generation}: {state.slices} of {state.expected} slices present "
                       "(incomplete: allocationMode All fails on it in 1.34, and 1.35+ allocates nothing from it)",
                       "the driver is still publishing or stopped half-way; check its kubelet-plugin logs on "
                       f"that node, and that it can create ResourceSlices")
        elif stale:
            bad = True
            report.add(f"pool {driver}/{pool}", WARN,
                       f"slices of older generation(s) {stale} remain beside generation {state.generation} "
                       "(the scheduler uses only the newest)",
                       "the driver should delete them; restart its kubelet plugin, or delete the stale slices")
    if not bad:
        report.add("pools", PASS, f"{len(states)} pools, each complete at one generation "
                   f"({len(headers)} slices)")


def check_double_booking(report: Report, snapshot: Snapshot) -> None:
    """Nodes where the device plugin and DRA both offer GPUs: the same GPU can be given twice."""
    by_node = _slices_by_node(snapshot.slices)
    both = [(n["metadata"]["name"], device_plugin_gpus(n)) for n in snapshot.nodes
            if device_plugin_gpus(n) > 0 and by_node.get(n["metadata"]["name"], {}).get(GPU_DRIVER)]
    plugin_only = sum(1 for n in snapshot.nodes if device_plugin_gpus(n) > 0) - len(both)
    for node, count in both:
        report.add(f"double booking on {node}", FAIL,
                   f"{node} offers {count:g} {DEVICE_PLUGIN_RESOURCE} through the device plugin and "
                   f"{by_node[node][GPU_DRIVER]} devices through {GPU_DRIVER} slices: the scheduler counts them "
                   "apart, so one GPU can go to a device-plugin pod and a DRA claim at once",
                   f"run one of the two per node: disable the device plugin there (GPU Operator: label the node "
                   f"nvidia.com/gpu.deploy.device-plugin=false) or keep the DRA driver off it")
    if not both:
        extra = f"; {plugin_only} node(s) use only the device plugin" if plugin_only > 0 else ""
        report.add("device plugin and DRA", PASS, f"no node offers GPUs through both the device plugin and DRA{extra}")


def _claim_allocated(claim: dict | None) -> bool:
    return bool(((claim or {}).get("status") or {}).get("allocation"))


def _pod_claim_names(pod: dict) -> list[str]:
    """The ResourceClaims a pod uses, with template claims resolved from its status."""
    resolved = {s["name"]: s.get("resourceClaimName")
                for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    names = [ref.get("resourceClaimName") or resolved.get(ref["name"])
             for ref in (pod.get("spec") or {}).get("resourceClaims") or []]
    extended = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    return [n for n in names + [extended] if n]


def check_pending_pods(report: Report, snapshot: Snapshot) -> None:
    """Pods pending on DRA claims that are not allocated, with a pointer to the why command."""
    claims = {(c["metadata"].get("namespace"), c["metadata"]["name"]): c for c in snapshot.claims}
    stuck = []
    for pod in snapshot.pods:
        meta, status = pod["metadata"], pod.get("status") or {}
        if status.get("phase", "Pending") != "Pending" or not (pod.get("spec") or {}).get("resourceClaims"):
            continue
        names = _pod_claim_names(pod)
        waiting = [n for n in names if not _claim_allocated(claims.get((meta.get("namespace"), n)))]
        if waiting or len(names) < len(pod["spec"]["resourceClaims"]):
            stuck.append(f"{meta.get('namespace')}/{meta['name']}")
    if stuck:
        shown = ", ".join(stuck[:5]) + (f" and {len(stuck) - 5} more" if len(stuck) > 5 else "")
        report.add("pods pending on claims", WARN, f"{len(stuck)} pod(s) pending with unallocated claims: {shown}",
                   f"see why: `{{prog}} why {stuck[0]}`")
    else:
        report.add("pods pending on claims", PASS, "no pod is pending on an unallocated ResourceClaim")


def check_priority_classes(report: Report, snapshot: Snapshot) -> None:
    """The no-preemption caveat, when PriorityClasses beyond the built-in two exist."""
    if snapshot.priority_classes is None:
        report.add("priority and preemption", WARN, "could not list PriorityClasses",
                   "needs `list` on priorityclasses.scheduling.k8s.io")
        return
    user = sorted(p["metadata"]["name"] for p in snapshot.priority_classes
                  if p["metadata"]["name"] not in BUILTIN_PRIORITY_CLASSES)
    if user:
        report.add("priority and preemption", WARN,
                   f"PriorityClasses in use ({', '.join(user[:5])}{' …' if len(user) > 5 else ''}), but the scheduler "
                   "does not preempt pods to free DRA devices: a high-priority pod waiting for a GPU stays Pending",
                   "reserve capacity for high-priority GPU work (a separate node pool or quota), or free devices by "
                   "hand; do not rely on preemption for DRA claims")
    else:
        report.add("priority and preemption", PASS, "no PriorityClass beyond the built-in ones, so the lack of "
                   "preemption for DRA devices does not bite")


def check_taint_rules(report: Report, rules: Rules | None, taints_on: bool, versions: list[str]) -> None:
    """Before DeviceTaintRules had a gate of their own (1.34), a scheduler with DRADeviceTaints waits for
    DeviceTaintRules, served only as resource.k8s.io/v1alpha3."""
    if rules is None or "DRADeviceTaintRules" in rules.gates or not taints_on:
        return
    if "v1alpha3" in versions:
        report.add("DeviceTaintRule API", PASS, "DRADeviceTaints is on and resource.k8s.io/v1alpha3 (DeviceTaintRule) "
                   f"is served, as kube-scheduler {rules.minor} needs")
    else:
        report.add("DeviceTaintRule API", FAIL,
                   f"DRADeviceTaints is on, but resource.k8s.io/v1alpha3 is not served: kube-scheduler {rules.minor} with that "
                   "gate lists DeviceTaintRules from it, never syncs, and schedules no pod at all",
                   "add resource.k8s.io/v1alpha3=true to kube-apiserver's --runtime-config, or turn DRADeviceTaints off")
