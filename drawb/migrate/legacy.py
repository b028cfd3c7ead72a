"""Find legacy GPU requests: ``nvidia.com/gpu`` and ``nvidia.com/mig-<profile>`` in container resources.

Works on one parsed document (a plain dict or ruamel's round-trip map) and knows where each
workload kind keeps its pod template. The checks follow the API server's rules for extended
resources: a whole number, limits set, requests (if given) equal to limits.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drawb.api.quantity import Quantity, QuantityError
from drawb.api.workloads import BUILT_IN, CUSTOM, Path, pod_specs, workload_kind
from drawb.migrate.errors import InvalidLegacyRequest, UnknownWorkloadKind

GPU_RESOURCE = "nvidia.com/gpu"
MIG_PREFIX = "nvidia.com/mig-"

@dataclass(frozen=True)
class Device:
    """What one legacy resource name asks for: a full GPU, or a MIG device of one profile."""

    resource: str  # nvidia.com/gpu or nvidia.com/mig-1g.10gb
    profile: str | None = None  # the MIG profile, None for a full GPU

    @property
    def device_class(self) -> str:
        """The NVIDIA driver's DeviceClass for it."""
        return "mig.nvidia.com" if self.profile else "gpu.nvidia.com"

    @property
    def request_name(self) -> str:
        """A DNS-label request name: ``gpu`` or ``mig-1g-10gb``."""
        if not self.profile:
            return "gpu"
        return "mig-" + "".join(c if c.isalnum() else "-" for c in self.profile.lower()).strip("-")

    @property
    def selector(self) -> str | None:
        """The CEL selector that picks this MIG profile (None for a full GPU)."""
        if not self.profile:
            return None
        return f"device.attributes['gpu.nvidia.com'].profile == '{self.profile}'"

    def describe(self) -> str:
        """``GPU`` or ``MIG 1g.10gb``."""
        return f"MIG {self.profile}" if self.profile else "GPU"


def device_for(resource: str) -> Device | None:
    """The Device a legacy resource name asks for, or None when it is not one drawb migrates."""
    if resource == GPU_RESOURCE:
        return Device(resource)
    if resource.startswith(MIG_PREFIX) and len(resource) > len(MIG_PREFIX):
        return Device(resource, resource[len(MIG_PREFIX):])
    return None


@dataclass(frozen=True)
class LegacyRequest:
    """One container's legacy request for one resource name."""

    container: str
    role: str  # "container", "init" (runs before the others) or "sidecar" (an init container that keeps running)
    device: Device
    count: int
    line: int | None  # 1-based line of the limit in its document, where known
    pod: str = ""  # the pod template it is in, for kinds with several (a PyTorchJob's ``Worker``)


@dataclass
class Workload:
    """A document that runs pods, and its legacy GPU requests."""

    kind: str
    name: str
    namespace: str | None
    pods: dict[str, Path]  # pod template label ("" for a kind with one) -> the path of its pod spec
    requests: list[LegacyRequest] = field(default_factory=list)
    other_nvidia: list[str] = field(default_factory=list)  # nvidia.com/* names drawb leaves alone

    @property
    def label(self) -> str:
        """``Deployment/trainer``."""
        return f"{self.kind}/{self.name}"

    @property
    def pod_spec_path(self) -> Path:
        """The path of the first pod spec that asks for legacy resources (of the first one, if none does)."""
        asked = [r.pod for r in self.requests]
        return self.pods[asked[0]] if asked else next(iter(self.pods.values()), ())

    def asking_pods(self) -> list[str]:
        """The labels of the pod templates with legacy requests, in manifest order."""
        return list(dict.fromkeys(r.pod for r in self.requests))

    def only(self, pod: str) -> Workload:
        """This workload with the requests of pod template ``pod`` alone."""
        return Workload(self.kind, self.name, self.namespace, {pod: self.pods[pod]},
                        [r for r in self.requests if r.pod == pod], self.other_nvidia)

    def containers(self) -> list[str]:
        """The containers with legacy requests, in manifest order."""
        return list(dict.fromkeys(r.container for r in self.requests))


def _line(mapping: Any, key: str, offset: int) -> int | None:
    lc = getattr(mapping, "lc", None)
    try:
        return lc.key(key)[0] + 1 + offset if lc is not None else None
    except (KeyError, TypeError, AttributeError):
        return None


def _at(source: str, line: int | None) -> str:
    return f"{source}:{line}" if line else source


def _count(value: Any, where: str, resource: str, container: str) -> int:
    what = f"{where}: container '{container}' asks for {resource}: {value!r}"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InvalidLegacyRequest(f"{what}, which is not a number of devices")
    try:
        quantity = Quantity.parse(str(value).strip())
    except QuantityError:
        raise InvalidLegacyRequest(f"{what}, which is not a quantity") from None
    number = quantity.value
    if number != int(number):
        raise InvalidLegacyRequest(f"{what}, which is not a whole number (the API server refuses a fraction of an "
                                   "extended resource)")
    if number < 1:
        raise InvalidLegacyRequest(f"{what}: that asks for no device",
                                   hint="remove the line (a claim asks for at least one device), then run "
                                        "migrate again; nothing was written")
    return int(number)


def _container_requests(container: Mapping, role: str, source: str, offset: int,
                        pod: str) -> tuple[list[LegacyRequest], list[str]]:
    name = str(container.get("name", "?"))
    resources = container.get("resources") or {}
    limits = resources.get("limits") or {}
    requests = resources.get("requests") or {}
    found, others = [], []
    for resource in dict.fromkeys([*limits, *requests]):
        if not isinstance(resource, str) or not resource.startswith("nvidia.com/"):
            continue
        device = device_for(resource)
        if device is None:
            others.append(f"{resource} (container {name}{f' of {pod}' if pod else ''})")
            continue
        holder = limits if resource in limits else requests
        where = _at(source, _line(holder, resource, offset))
        if resource not in limits:
            raise InvalidLegacyRequest(f"{where}: container '{name}' requests {resource} without a limit "
                                       "(the API server requires a limit for extended resources)")
        count = _count(limits[resource], where, resource, name)
        if resource in requests and _count(requests[resource], where, resource, name) != count:
            raise InvalidLegacyRequest(f"{where}: container '{name}' has {resource} requests "
                                       f"{requests[resource]!r} but limits {limits[resource]!r} (they must be equal)")
        found.append(LegacyRequest(name, role, device, count, _line(holder, resource, offset), pod))
    return found, others


def mentions_nvidia(node: Any) -> bool:
    """Whether a ``nvidia.com/gpu`` or ``nvidia.com/mig-*`` key appears anywhere in ``node``."""
    if isinstance(node, Mapping):
        return any((isinstance(k, str) and device_for(k) is not None) or mentions_nvidia(v) for k, v in node.items())
    if isinstance(node, list):
        return any(mentions_nvidia(v) for v in node)
    return False


def pod_spec(doc: Mapping, path: Path) -> Mapping | None:
    """The pod spec at ``path`` in ``doc``, or None where a level is missing."""
    node: Any = doc
    for key in path:
        if isinstance(key, int):
            node = node[key] if isinstance(node, list) and key < len(node) else None
        else:
            node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else None


def find_legacy(doc: Any, source: str, offset: int = 0) -> Workload | None:
    """The workload in ``doc`` with its legacy GPU requests; None for a document that is no workload.

    ``source`` names the file in errors and ``offset`` is the document's first line in it (0-based).
    A kind drawb does not know raises UnknownWorkloadKind when it mentions a legacy GPU resource.
    """
    if not isinstance(doc, Mapping):
        return None
    kind = str(doc.get("kind") or "")
    meta = doc.get("metadata") or {}
    if workload_kind(doc) is None:
        if mentions_nvidia(doc):
            known = [*BUILT_IN, *CUSTOM]
            close = difflib.get_close_matches(kind, known, n=1)
            raise UnknownWorkloadKind(
                f"{_at(source, offset + 1)}: {kind or 'a document without kind'} "
                f"'{meta.get('name', '?')}' asks for NVIDIA GPUs, but drawb does not know where a {kind or 'kind-less document'}"
                " keeps its pods",
                hint=(f"did you mean kind: {close[0]}? " if close else "")
                + f"drawb migrates {', '.join(known)}; nothing was written")
        return None
    pods = pod_specs(doc)
    workload = Workload(kind, str(meta.get("name", "")), meta.get("namespace"), {p.label: p.path for p in pods})
    for pod in pods:
        groups = ([("init", c) for c in pod.spec.get("initContainers") or []]
                  + [("container", c) for c in pod.spec.get("containers") or []])
        for role, container in groups:
            if not isinstance(container, Mapping):
                continue
            if role == "init" and container.get("restartPolicy") == "Always":
                role = "sidecar"
            found, others = _container_requests(container, role, source, offset, pod.label)
            workload.requests += found
            workload.other_nvidia += others
    return workload
