"""The resourceclaim controller, as kube-controller-manager runs it, on the simulated store.

For every pod entry that names a ResourceClaimTemplate it creates the claim (``<pod>-<entry>-``
plus a 5-character suffix, owned by the pod, annotated with the entry name, the template's
labels, annotations and spec) and records it in the pod's ``status.resourceClaimStatuses``.
It removes pods that are gone or done from ``status.reservedFor``; a claim nobody reserves any
more is deallocated, and one generated for a pod that is done is deleted (from 1.35 on also the claim the
scheduler made for the pod's extended resources, ``extended_claim_object``).
"""

from __future__ import annotations

import copy

from drawb import versions
from drawb.cluster.sim.publish import name_suffix

POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"
_MAX_BASE_LEN = 57  # 63 characters minus the hyphen and the 5 random characters


def generate_name(pod: str, entry: str) -> str:
    """The controller's ``generateName`` for a template claim: both parts cut proportionally."""
    base = f"{pod}-{entry}-"
    if len(base) <= _MAX_BASE_LEN:
        return base
    return pod[: len(pod) * _MAX_BASE_LEN // len(base)] + "-" + entry[: len(entry) * _MAX_BASE_LEN // len(base)]


def claim_name(pod: dict, entry: str) -> str:
    """The generated claim's name: generateName plus a suffix derived from the pod's identity."""
    meta = pod["metadata"]
    return generate_name(meta["name"], entry) + name_suffix("resourceclaim", meta["namespace"], meta.get("uid"), entry)


def extended_claim_name(pod: dict) -> str | None:
    """The claim the scheduler made for ``pod``'s extended resources (``status.extendedResourceClaimStatus``)."""
    return ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName") or None


def extended_claim_object(claim: dict, allocation: dict, consumer: dict, when: str) -> dict:
    """The extended-resource claim as the scheduler leaves it in PreBind: created from ``claim`` (its generateName
    plus 5 characters), allocated, its finalizer added, reserved for the pod ``consumer``."""
    made = copy.deepcopy(claim)
    meta = made["metadata"]
    meta["name"] = meta["generateName"] + name_suffix("extended-resources", meta["namespace"],
                                                      consumer.get("uid", ""), when)
    meta["finalizers"] = [DELETE_PROTECTION]
    made["status"] = {"allocation": copy.deepcopy(allocation), "reservedFor": [dict(consumer)]}
    return made


def is_done(pod: dict) -> bool:
    """Whether a pod has ended and will never run again (Succeeded or Failed)."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def owning_pod(claim: dict) -> tuple[str, str] | None:
    """(name, uid) of the pod that controls ``claim``, if a pod does."""
    for ref in claim["metadata"].get("ownerReferences") or ():
        if ref.get("kind") == "Pod" and ref.get("apiVersion") == "v1" and ref.get("controller"):
            return ref["name"], ref.get("uid", "")
    return None


def claim_from_template(pod: dict, entry: str, template: dict, minor: int = 34) -> dict:
    """The ResourceClaim the controller of Kubernetes 1.<minor> creates for ``pod``'s entry ``entry`` from
    ``template`` (its owner reference blocks the owner's deletion only before 1.35)."""
    meta = pod["metadata"]
    template_meta = (template.get("spec") or {}).get("metadata") or {}
    claim_meta: dict = {
        "name": claim_name(pod, entry),
        "generateName": generate_name(meta["name"], entry),
        "namespace": meta["namespace"],
        "annotations": {**(template_meta.get("annotations") or {}), POD_CLAIM_ANNOTATION: entry},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta.get("uid", ""),
                             "controller": True, **({} if versions.has(minor, "claims.owner_does_not_block_deletion") else {"blockOwnerDeletion": True})}],
    }
    if template_meta.get("labels"):
        claim_meta["labels"] = dict(template_meta["labels"])
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": claim_meta,
            "spec": copy.deepcopy((template.get("spec") or {}).get("spec") or {}), "status": {}}


def missing_claims(pod: dict) -> list[tuple[str, str]]:
    """(entry, template) for each template entry of ``pod`` without a generated claim yet."""
    known = {s.get("name") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()}
    return [(e["name"], e["resourceClaimTemplateName"]) for e in pod["spec"].get("resourceClaims") or ()
            if e.get("resourceClaimTemplateName") and e["name"] not in known]


def pod_claim_names(pod: dict) -> dict[str, str | None]:
    """Pod claim entry -> ResourceClaim name (None while a template's claim is not created)."""
    generated = {s.get("name"): s.get("resourceClaimName")
                 for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()}
    return {e["name"]: e.get("resourceClaimName") or generated.get(e["name"])
            for e in pod["spec"].get("resourceClaims") or ()}


def release(claim: dict, live_pods: dict[str, dict]) -> bool:
    """Drop reservations of pods that are gone or done; deallocate when none is left.

    ``live_pods`` maps pod uid to pod in the claim's namespace. True if the claim changed.
    """
    status = claim.setdefault("status", {})
    reserved = status.get("reservedFor") or []
    valid = [r for r in reserved
             if r.get("resource") != "pods" or (r.get("uid") in live_pods and not is_done(live_pods[r["uid"]]))]
    if len(valid) == len(reserved) and (valid or not status.get("allocation")):
        return False
    if valid:
        status["reservedFor"] = valid
    else:
        status.pop("reservedFor", None)
        status.pop("allocation", None)
        status.pop("devices", None)
        finalizers = [f for f in claim["metadata"].get("finalizers") or () if f != DELETE_PROTECTION]
        if finalizers:
            claim["metadata"]["finalizers"] = finalizers
        else:
            claim["metadata"].pop("finalizers", None)
    return True
