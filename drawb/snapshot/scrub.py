"""What of each object a snapshot keeps: the DRA state, never what may carry secrets.

Kept by allow-list, kind by kind: identity and labels, of annotations only those Kubernetes' DRA
controllers write (``resource.kubernetes.io/...``, such as a generated claim's pod-claim-name;
never the others, which hold the ``last-applied-configuration`` with whole manifests, environment
values included), no managedFields; the spec the scheduler reads, and the status the frames show. Pods keep their
scheduling fields and containers' names, images, commands and resources, never ``env``,
``envFrom`` or volumes; nodes keep labels, taints, capacity and allocatable, never addresses or
machine identifiers. Secrets and ConfigMaps are never read at all.
"""

from __future__ import annotations

import copy

_METADATA = ("name", "namespace", "uid", "labels", "ownerReferences", "creationTimestamp", "generation",
             "deletionTimestamp", "finalizers", "generateName")
_POD_SPEC = ("nodeName", "schedulerName", "priority", "priorityClassName", "restartPolicy", "nodeSelector",
             "affinity", "tolerations", "resourceClaims", "extendedResourceClaimName")
_CONTAINER = ("name", "image", "command", "args", "resources", "restartPolicy")
_POD_STATUS = ("phase", "resourceClaimStatuses", "extendedResourceClaimStatus", "nominatedNodeName", "startTime")
DRA_ANNOTATIONS = "resource.kubernetes.io/"
_CONDITION = ("type", "status", "reason")
_NODE_INFO = ("kubeletVersion", "architecture", "operatingSystem")


def _pick(obj: dict | None, keys: tuple[str, ...]) -> dict:
    obj = obj if isinstance(obj, dict) else {}
    return {k: copy.deepcopy(obj[k]) for k in keys if k in obj}


def _metadata(obj: dict, kind: str) -> dict:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    kept = _pick(meta, _METADATA)
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k.startswith(DRA_ANNOTATIONS)}
    if annotations:
        kept["annotations"] = annotations
    return {"apiVersion": obj.get("apiVersion") or _API_VERSIONS[kind], "kind": kind, "metadata": kept}


def _conditions(conditions: object) -> list[dict]:
    return [_pick(c, _CONDITION) for c in conditions or () if isinstance(c, dict)]


def _pod(pod: dict) -> dict:
    out = _metadata(pod, "Pod")
    spec = pod.get("spec") or {}
    out["spec"] = _pick(spec, _POD_SPEC)
    for key in ("initContainers", "containers"):
        if key in spec:
            out["spec"][key] = [_pick(c, _CONTAINER) for c in spec[key] or ()]
    status = pod.get("status") or {}
    out["status"] = _pick(status, _POD_STATUS)
    if "conditions" in status:
        out["status"]["conditions"] = _conditions(status["conditions"])
    return out


def _node(node: dict) -> dict:
    out = _metadata(node, "Node")
    out["spec"] = _pick(node.get("spec"), ("taints", "unschedulable"))
    status = node.get("status") or {}
    out["status"] = _pick(status, ("capacity", "allocatable"))
    if "conditions" in status:
        out["status"]["conditions"] = _conditions(status["conditions"])
    if "nodeInfo" in status:
        out["status"]["nodeInfo"] = _pick(status["nodeInfo"], _NODE_INFO)
    return out


def _claim(claim: dict) -> dict:
    out = _metadata(claim, "ResourceClaim")
    out["spec"] = copy.deepcopy(claim.get("spec") or {})
    status = copy.deepcopy(claim.get("status") or {})
    for device in status.get("devices") or ():
        if isinstance(device, dict):
            device.pop("data", None)  # driver-written free-form data
            device.pop("networkData", None)  # interface names, IP and hardware addresses
    if status:
        out["status"] = status
    return out


def _with_spec(kind: str):
    def keep(obj: dict) -> dict:
        out = _metadata(obj, kind)
        out["spec"] = copy.deepcopy(obj.get("spec") or {})
        return out
    return keep


def _namespace(ns: dict) -> dict:
    return _metadata(ns, "Namespace")


_API_VERSIONS = {"Namespace": "v1", "Node": "v1", "Pod": "v1", "DeviceClass": "resource.k8s.io/v1",
                 "ResourceSlice": "resource.k8s.io/v1", "ResourceClaimTemplate": "resource.k8s.io/v1",
                 "ResourceClaim": "resource.k8s.io/v1"}

SCRUBBERS = {
    "Namespace": _namespace,
    "Node": _node,
    "DeviceClass": _with_spec("DeviceClass"),
    "ResourceSlice": _with_spec("ResourceSlice"),
    "ResourceClaimTemplate": _with_spec("ResourceClaimTemplate"),
    "ResourceClaim": _claim,
    "Pod": _pod,
}


def scrub(kind: str, obj: dict) -> dict:
    """The part of ``obj`` (of ``kind``) a snapshot keeps, as a new dict."""
    return SCRUBBERS[kind](obj)


def pods_using_claims(pods: list[dict], claims: list[dict]) -> list[dict]:
    """The pods that name a claim, were given one for an extended resource, or hold one's reservation."""
    reserving = {r.get("uid") for c in claims for r in ((c.get("status") or {}).get("reservedFor") or ())}
    return [p for p in pods
            if (p.get("spec") or {}).get("resourceClaims")
            or (p.get("status") or {}).get("extendedResourceClaimStatus")
            or (p.get("metadata") or {}).get("uid") in reserving]


def select_objects(listed: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """The objects a snapshot keeps from what was listed: all DRA objects and nodes, the pods using
    claims and the namespaces holding claims, templates or those pods; each scrubbed."""
    claims = listed.get("ResourceClaim", [])
    kept = {kind: list(listed.get(kind, [])) for kind in SCRUBBERS}
    kept["Pod"] = pods_using_claims(listed.get("Pod", []), claims)
    used = {(o.get("metadata") or {}).get("namespace") for kind in ("ResourceClaim", "ResourceClaimTemplate", "Pod")
            for o in kept[kind]} - {None}
    named = {(n.get("metadata") or {}).get("name"): n for n in listed.get("Namespace", [])}
    kept["Namespace"] = [named.get(ns) or {"metadata": {"name": ns}} for ns in sorted(used)]
    return {kind: [scrub(kind, o) for o in objects] for kind, objects in kept.items()}
