"""The ResourceClaim kube-scheduler makes for a pod's extended resources that a DeviceClass serves
(DRAExtendedResource), version by version, as the DynamicResources plugin makes it.

- Which pods: the gate is on and the pod asks (``resources.requests``, or the limits they default from) for a
  resource a DeviceClass maps (``drawb.api.resourcefit.class_mapping``). At 1.34 only extended names count
  (``IsExtendedResourceName``); from 1.35 on also a class's implicit name ``deviceclass.resource.kubernetes.io/<class>``.
- Per node (``ExtendedClaim.for_node``): the resources that node leaves to DRA (``left_to_dra``) get one request per
  container that asks for them, named ``container-<i>-request-<j>`` (``i``: the container's index among the init
  containers then the containers; ``j``: the resource's index among the container's sorted request names), an
  ExactCount of the container's quantity from the mapped class. From 1.35 on an init container that runs before a
  longer-lived container asking for the same resource reuses that container's devices, and the init containers
  share the largest of their requests; from 1.36 on the requests are sorted by name. A node whose device plugin
  serves everything gets no claim (None).
- The claim: ``generateName: <pod>-extended-resources-``, owned by the pod (controller; at 1.34 also
  ``blockOwnerDeletion``), annotated ``resource.kubernetes.io/extended-resource-claim: "true"``, with the request
  mappings the scheduler writes into ``pod.status.extendedResourceClaimStatus``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from drawb import versions
from drawb.api.resourcefit import IMPLICIT_PREFIX, class_mapping, count_of, extended_requests, is_extended, left_to_dra

Obj = Mapping[str, Any]
ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
IN_MEMORY_NAME = "<extended-resources>"  # the name the scheduler gives the claim until it creates it
GATE = "DRAExtendedResource"
_NAME_MAX = 58  # the API server cuts a generateName to 63 characters less its 5 random ones


def generate_name(pod_name: str) -> str:
    """The claim's ``generateName`` as the API server uses it (cut to 58 characters)."""
    return (pod_name + "-extended-resources-")[:_NAME_MAX]


def _dra_name(name: str, minor: int) -> bool:
    """Whether the plugin considers ``name`` (``IsExtendedResourceName``; from 1.35 on ``IsDRAExtendedResourceName``)."""
    return is_extended(name) or (versions.has(minor, "extended.implicit_names_served") and name.startswith(IMPLICIT_PREFIX))


def container_requests(container: Obj) -> dict[str, Any]:
    """A container's requests as the API server stores them: its limits fill in the requests it leaves unset."""
    resources = container.get("resources") or {}
    return {**(resources.get("limits") or {}), **(resources.get("requests") or {})}


def _containers(pod: Obj) -> list[Obj]:
    spec = pod.get("spec") or {}
    return [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]


def _request(index: int, container: Obj, resource: str, class_name: str,
             reuse: Iterable[dict | None] = ()) -> tuple[dict | None, list[dict]]:
    """The request for one container's ``resource`` and its mappings; ``reuse``: requests of longer-lived
    containers whose devices it takes first (1.35 on)."""
    asked = container_requests(container)
    count = count_of(asked[resource]) if resource in asked else 0
    if not count:
        return None, []
    mappings, have = [], 0
    for other in reuse:
        if other is not None:
            have += other["exactly"]["count"]
            mappings.append({"containerName": container.get("name", ""), "resourceName": resource,
                             "requestName": other["name"]})
            if have >= count:
                return None, mappings
    name = f"container-{index}-request-{sorted(asked).index(resource)}"
    mappings.append({"containerName": container.get("name", ""), "resourceName": resource, "requestName": name})
    return ({"name": name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount",
                                       "count": count - have}}, mappings)


def _requests_134(pod: Obj, resources: list[str], mapping: Mapping[str, str]) -> tuple[list[dict], list[dict]]:
    """1.34's ``createDeviceRequests`` (one request per container and resource) and ``createRequestMappings``."""
    containers = _containers(pod)
    requests = [req for resource in resources for index, container in enumerate(containers)
                for req in [_request(index, container, resource, mapping[resource])[0]] if req]
    names = {r["name"] for r in requests}
    mappings = []
    for index, container in enumerate(containers):
        asked = sorted(container_requests(container))
        for position, resource in enumerate(asked):
            name = f"container-{index}-request-{position}"
            if name in names:
                mappings.append({"containerName": container.get("name", ""), "resourceName": resource,
                                 "requestName": name})
    return requests, mappings


def _requests_135(pod: Obj, resources: list[str], mapping: Mapping[str, str], minor: int) -> tuple[list[dict], list[dict]]:
    """1.35 on: ``createRequestsAndMappings`` (init containers reuse and share devices)."""
    containers = _containers(pod)
    inits = len((pod.get("spec") or {}).get("initContainers") or ())
    short_lived = [i for i, c in enumerate(containers) if i < inits and c.get("restartPolicy") != "Always"]
    long_lived = [i for i in range(len(containers)) if i not in short_lived]
    requests: list[dict] = []
    mappings: list[dict] = []
    for resource in resources:
        class_name = mapping[resource]
        lasting: list[dict | None] = [None] * len(containers)
        lasting_maps: list[dict] = []
        for i in long_lived:
            lasting[i], made = _request(i, containers[i], resource, class_name)
            lasting_maps += made
        largest: dict | None = None
        short_names: set[str] = set()
        short_maps: list[dict] = []
        for i in short_lived:
            request, made = _request(i, containers[i], resource, class_name, lasting[i:])
            if request is not None:
                short_names.add(request["name"])
                if largest is None or largest["exactly"]["count"] < request["exactly"]["count"]:
                    largest = request
            short_maps += made
        if largest is not None and len(short_names) > 1:
            short_names.discard(largest["name"])
            for entry in short_maps:
                if entry["requestName"] in short_names:
                    entry["requestName"] = largest["name"]
        if largest is not None:
            requests.append(largest)
        requests += [r for r in lasting if r is not None]
        mappings += lasting_maps + short_maps
    if versions.has(minor, "extended.requests_sorted"):
        requests.sort(key=lambda r: r["name"])
    return requests, mappings


@dataclass(frozen=True)
class NodeClaim:
    """The claim for one node (named ``<extended-resources>`` until it is created) and the request mappings the
    scheduler writes into ``pod.status.extendedResourceClaimStatus`` once it is."""

    claim: dict
    mappings: list[dict]


@dataclass(frozen=True)
class ExtendedClaim:
    """The scheduler's claim for one pod's DRA-served extended resources on a cluster of Kubernetes 1.<minor>."""

    pod: Obj
    mapping: Mapping[str, str]  # resource name -> DeviceClass, of the resources the pod asks for
    wanted: Mapping[str, int]  # what the pod asks for in all (PodRequests), of those resources
    minor: int

    def resources_for(self, node: Obj) -> list[str]:
        """The resources ``node`` leaves to DRA, by name."""
        return [name for name in sorted(self.mapping) if self.wanted.get(name) and left_to_dra(name, node, self.minor)]

    def for_node(self, node: Obj) -> NodeClaim | None:
        """The claim for ``node``, or None where the node's device plugin serves all the pod asks for."""
        resources = self.resources_for(node)
        if not resources:
            return None
        requests, mappings = (_requests_135(self.pod, resources, self.mapping, self.minor)
                              if versions.has(self.minor, "extended.request_per_container")
                              else _requests_134(self.pod, resources, self.mapping))
        meta = self.pod.get("metadata") or {}
        owner = {"apiVersion": "v1", "kind": "Pod", "name": meta.get("name", ""), "uid": meta.get("uid", ""),
                 "controller": True}
        if not versions.has(self.minor, "claims.owner_does_not_block_deletion"):
            owner["blockOwnerDeletion"] = True
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": IN_MEMORY_NAME, "generateName": generate_name(meta.get("name", "")),
                              "namespace": meta.get("namespace", ""), "ownerReferences": [owner],
                              "annotations": {ANNOTATION: "true"}},
                 "spec": {"devices": {"requests": requests}}}
        return NodeClaim(claim, mappings)

    def classes_claim(self) -> dict:
        """A claim with one request per class the pod's resources map to (what selectors its allocation reads)."""
        classes = sorted(set(self.mapping.values()))
        return {"spec": {"devices": {"requests": [{"name": f"r{i}", "exactly": {"deviceClassName": name}}
                                                  for i, name in enumerate(classes)]}}}

    def variant(self, node: Obj) -> tuple:
        """What makes ``node``'s claim differ from another node's (the resources left to DRA)."""
        return tuple(self.resources_for(node))


def extended_claim(pod: Obj, classes: Iterable[Obj], kubernetes_version: str,
                   feature_gates: Mapping[str, bool]) -> ExtendedClaim | None:
    """The scheduler's extended-resource claim for ``pod``, or None where it makes none (the gate is off, or no
    DeviceClass maps what the pod asks for)."""
    from drawb.alloc.versions import flavor

    run = flavor(kubernetes_version, feature_gates)
    if not dict(run.gates).get(GATE, False):
        return None
    wanted = extended_requests(pod)
    mapping = class_mapping(classes, run.minor)
    served = {name: mapping[name] for name in wanted if name in mapping and _dra_name(name, run.minor)}
    if not served:
        return None
    return ExtendedClaim(pod, served, {name: wanted[name] for name in served}, run.minor)
