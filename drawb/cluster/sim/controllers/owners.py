"""What the workload controllers share: owner references, generated names, pods made from templates.

Objects handed to these functions are never changed: they return new objects.
"""

from __future__ import annotations

import json

from drawb.cluster.sim.events import EventRecorder
from drawb.cluster.sim.tree import copy_tree
from drawb.gpu.driver import name_suffix, stable_hex

WORKLOAD_KINDS = frozenset({"ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"})  # with a generation
_MAX_GENERATE_BASE = 58  # generateName is cut to 63 characters minus the 5 random ones
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's rand.SafeEncodeString alphabet


def owner_reference(owner: dict) -> dict:
    """The reference a controller puts on what it creates: ``controller`` and ``blockOwnerDeletion`` true."""
    meta = owner["metadata"]
    return {"apiVersion": owner.get("apiVersion", ""), "kind": owner.get("kind", ""), "name": meta["name"],
            "uid": meta.get("uid", ""), "controller": True, "blockOwnerDeletion": True}


def controller_of(obj: dict, kind: str) -> dict | None:
    """The owner reference of ``obj`` that is its controller, if it is a ``kind``."""
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") == kind:
            return ref
    return None


def controller_uid(obj: dict) -> str | None:
    """The uid of the object that controls ``obj`` (its owner reference with ``controller: true``), if any."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref.get("uid")
    return None


def generated_name(base: str, *parts: object) -> str:
    """``generateName`` ``base`` (cut to 58 characters) plus 5 characters derived from ``parts``."""
    return base[:_MAX_GENERATE_BASE] + name_suffix(*parts)


def template_hash(template: dict, collisions: int = 0) -> str:
    """A pod template's hash as the controllers print it (``pod-template-hash``, ``controller-revision-hash``):
    a 32-bit number's decimal digits, each mapped into apimachinery's safe alphabet, so it looks like the
    real one (``5d8f7c9b6d``); the same template gives the same hash (the real one hashes Go's printout of
    the template with FNV)."""
    text = json.dumps(template, sort_keys=True, separators=(",", ":"))
    number = int(stable_hex("pod-template", text, collisions, length=8), 16)
    return "".join(_SAFE_ALPHABET[ord(digit) % len(_SAFE_ALPHABET)] for digit in str(number))


def pod_from_template(owner: dict, template: dict, name: str, generate_name: str | None = None,
                      labels: dict[str, str] | None = None) -> dict:
    """The pod a controller creates from ``template`` (a ``PodTemplateSpec``) for ``owner``, named ``name``,
    with ``labels`` added to the template's."""
    template_meta = template.get("metadata") or {}
    meta: dict = {"name": name, "namespace": owner["metadata"].get("namespace") or "default",
                  "labels": {**(template_meta.get("labels") or {}), **(labels or {})},
                  "ownerReferences": [owner_reference(owner)]}
    if generate_name:
        meta["generateName"] = generate_name
    if template_meta.get("annotations"):
        meta["annotations"] = dict(template_meta["annotations"])
    spec = copy_tree(template.get("spec") or {})
    spec.setdefault("restartPolicy", "Always")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}


def is_done(pod: dict) -> bool:
    """Whether a pod has ended for good (Succeeded or Failed)."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_active(pod: dict) -> bool:
    """Whether a pod counts for its controller: not ended and not being deleted."""
    return not is_done(pod) and not pod["metadata"].get("deletionTimestamp")


def is_ready(pod: dict) -> bool:
    """Whether a pod's Ready condition is True."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def set_condition(status: dict, kind: str, true: bool, reason: str, message: str, now: str) -> None:
    """Set a workload's condition ``kind`` in ``status`` (its transition time kept while its status stays)."""
    conditions = status.setdefault("conditions", [])
    value = "True" if true else "False"
    old = next((c for c in conditions if c["type"] == kind), None)
    new = {"type": kind, "status": value, "lastUpdateTime": now,
           "lastTransitionTime": old["lastTransitionTime"] if old and old["status"] == value else now,
           "reason": reason, "message": message}
    if old is not None and all(old.get(k) == new[k] for k in ("status", "reason", "message")):
        return
    if old is None:
        conditions.append(new)
    else:
        conditions[conditions.index(old)] = new


def bump_generation(new: dict, existing: dict | None) -> None:
    """``metadata.generation`` as the API server keeps it: 1 at creation, one more on each change of spec."""
    old = ((existing or {}).get("metadata") or {}).get("generation") or 0
    changed = existing is None or new.get("spec") != existing.get("spec")
    new["metadata"]["generation"] = old + 1 if changed else old


def record_failed_create(events: EventRecorder, owner: dict, message: str, component: str) -> None:
    """The ``FailedCreate`` warning a controller records about ``owner`` when the API server refuses its pod."""
    events.record_counted(owner, type_="Warning", reason="FailedCreate", message=message, component=component)
