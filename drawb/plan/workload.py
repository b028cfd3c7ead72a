"""What to place: a pod's claims (or one claim, or one template's claim) and the pod's node rules.

``resolve(kind, name, namespace, find)`` reads the objects through ``find(kind, name, namespace)``
(the command layer looks in a manifest file first, then in the cluster) and returns a Workload:
the claims one copy needs, in the pod's order, each marked *fresh* (a claim stamped from a
template, or the claim or template asked about: every copy gets its own) or shared (a claim the
pod names, which copies share). A template's claim is stamped as the resourceclaim controller
would (its spec, the pod's namespace); a pod whose generated claim exists already uses that claim.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from drawb.api.resourcefit import extended_requests
from drawb.errors import PROG
from drawb.plan.errors import NoClaims, ObjectNotFound

Find = Callable[[str, str, str], "dict | None"]
KINDS = {"pod": "Pod", "claim": "ResourceClaim", "resourceclaim": "ResourceClaim", "template": "ResourceClaimTemplate",
         "resourceclaimtemplate": "ResourceClaimTemplate"}
SHORT = {"Pod": "pod", "ResourceClaim": "claim", "ResourceClaimTemplate": "template"}


@dataclass
class Workload:
    """One copy of what a pod (or claim, or template) asks for."""

    kind: str  # Pod, ResourceClaim or ResourceClaimTemplate
    name: str
    namespace: str
    pod: dict  # the pod, or a stand-in without node rules
    claims: list[dict] = field(default_factory=list)  # in pod order
    fresh: list[bool] = field(default_factory=list)  # per claim: every copy gets its own

    @property
    def label(self) -> str:
        """``pod/NAME`` as users write it."""
        return f"{SHORT[self.kind]}/{self.name}"

    @property
    def bound_node(self) -> str | None:
        """The node a pod is already bound to."""
        return (self.pod.get("spec") or {}).get("nodeName") or None


def _stand_in_pod(name: str, namespace: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": {}}


def stamp(template: dict, claim_name: str, namespace: str) -> dict:
    """The claim the resourceclaim controller would make from ``template`` (without its status)."""
    inner = (template.get("spec") or {}).get("spec") or {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": claim_name, "namespace": namespace}, "spec": copy.deepcopy(inner)}


def _missing(kind: str, name: str, namespace: str, where: str = "") -> ObjectNotFound:
    short = SHORT[kind]
    return ObjectNotFound(f"no {kind} '{name}' in namespace '{namespace}'{where}",
                          hint=f"`{PROG} {short}s -n {namespace}` lists them" if short != "template"
                          else f"check the name and namespace (-n) of the ResourceClaimTemplate")


def resolve(kind: str, name: str, namespace: str, find: Find, extended: bool = False) -> Workload:
    """The Workload of object ``kind``/``name``; ObjectNotFound or NoClaims when there is none (with
    ``extended``, a pod without claims that asks for extended resources is a Workload without claims)."""
    obj = find(kind, name, namespace)
    if obj is None:
        raise _missing(kind, name, namespace)
    if kind == "ResourceClaim":
        return Workload(kind, name, namespace, _stand_in_pod(name, namespace), [obj], [True])
    if kind == "ResourceClaimTemplate":
        return Workload(kind, name, namespace, _stand_in_pod(name, namespace), [stamp(obj, f"{name}-copy", namespace)], [True])
    return _pod_workload(obj, namespace, find, extended)


def _pod_workload(pod: dict, namespace: str, find: Find, extended: bool = False) -> Workload:
    name = pod["metadata"]["name"]
    entries = (pod.get("spec") or {}).get("resourceClaims") or []
    if not entries and extended and extended_requests(pod):
        return Workload("Pod", name, namespace, pod)
    if not entries:
        raise NoClaims(f"pod '{name}' uses no ResourceClaims: there is nothing to allocate")
    generated = {s.get("name"): s.get("resourceClaimName")
                 for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    workload = Workload("Pod", name, namespace, pod)
    for entry in entries:
        where = f" (pod '{name}' names it in spec.resourceClaims[{entry.get('name')}])"
        if entry.get("resourceClaimName"):
            claim = find("ResourceClaim", entry["resourceClaimName"], namespace)
            if claim is None:
                raise _missing("ResourceClaim", entry["resourceClaimName"], namespace, where)
            workload.claims.append(claim)
            workload.fresh.append(False)
            continue
        template_name = entry.get("resourceClaimTemplateName")
        if not template_name:
            raise NoClaims(f"pod '{name}': spec.resourceClaims[{entry.get('name')}] names neither a claim nor a template",
                           hint="set resourceClaimName or resourceClaimTemplateName")
        claim = find("ResourceClaim", generated[entry["name"]], namespace) if generated.get(entry.get("name")) else None
        if claim is None:
            template = find("ResourceClaimTemplate", template_name, namespace)
            if template is None:
                raise _missing("ResourceClaimTemplate", template_name, namespace, where)
            claim = stamp(template, f"{name}-{entry['name']}", namespace)
        workload.claims.append(claim)
        workload.fresh.append(True)
    return workload
