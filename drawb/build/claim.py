"""Requests, constraints and the claim as a whole, written out as a ResourceClaimTemplate and a Pod."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from drawb.build.conditions import BuildError, Condition, joined
from drawb.build.sharing import MIG_CLASS, Sharing

DEFAULT_CLASS = "gpu.nvidia.com"
DEFAULT_IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"
POD_CLAIM = "gpus"  # the pod's name for its claim (spec.resourceClaims[].name)


@dataclass
class Choice:
    """Which devices, how many: the body of an ``exactly`` request or one ``firstAvailable`` alternative.

    ``count`` devices (ExactCount), or every matching device with ``all_devices``; ``extra`` keeps fields
    drawb does not edit (tolerations, adminAccess, capacity) as they were read."""

    name: str = "gpu"
    device_class: str = DEFAULT_CLASS
    conditions: list[Condition] = field(default_factory=list)
    count: int = 1
    all_devices: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def selector(self) -> str:
        """The one CEL selector of the conditions ('' when there are none)."""
        return joined(self.conditions)

    def body(self) -> dict:
        """The request's fields (deviceClassName, selectors, allocationMode, count)."""
        if not self.device_class:
            raise BuildError(f"request {self.name!r} has no DeviceClass", hint="choose one of the cluster's classes")
        body: dict = {"deviceClassName": self.device_class}
        if self.conditions:
            body["selectors"] = [{"cel": {"expression": self.selector}}]
        if self.all_devices:
            body["allocationMode"] = "All"
        else:
            if int(self.count) < 1:
                raise BuildError(f"request {self.name!r}: count {self.count} is below 1", hint="ask for 1 or more, or All")
            if int(self.count) != 1:  # 1 is the default; a person leaves it out
                body["count"] = int(self.count)
        body.update(copy.deepcopy(self.extra))
        return body


@dataclass
class Request:
    """One request of the claim: one choice (``exactly``), or ordered alternatives (``firstAvailable``)."""

    name: str = "gpu"
    choices: list[Choice] = field(default_factory=lambda: [Choice()])
    first_available: bool = False

    @property
    def alternatives(self) -> bool:
        """Whether the request is written as ``firstAvailable``."""
        return self.first_available or len(self.choices) > 1

    def body(self) -> dict:
        """The ``spec.devices.requests[]`` entry in the v1 shape."""
        if not self.choices:
            raise BuildError(f"request {self.name!r} has no devices to ask for", hint="add an alternative")
        if not self.alternatives:
            return {"name": self.name, "exactly": self.choices[0].body()}
        names = [c.name for c in self.choices]
        if len(set(names)) != len(names):
            raise BuildError(f"request {self.name!r}: two alternatives share a name ({', '.join(names)})",
                             hint="give each alternative its own name")
        return {"name": self.name, "firstAvailable": [{"name": c.name, **c.body()} for c in self.choices]}


@dataclass
class Constraint:
    """``matchAttribute`` (the same value on every device) or ``distinctAttribute`` (a different value on each)
    of a fully qualified attribute, over ``requests`` (every request when empty)."""

    kind: str = "matchAttribute"
    attribute: str = "gpu.nvidia.com/productName"
    requests: list[str] = field(default_factory=list)

    def body(self) -> dict:
        """The ``spec.devices.constraints[]`` entry."""
        if self.kind not in ("matchAttribute", "distinctAttribute"):
            raise BuildError(f"constraint {self.kind!r} is not matchAttribute or distinctAttribute")
        body: dict = {self.kind: self.attribute}
        if self.requests:
            body["requests"] = list(self.requests)
        return body


@dataclass
class ClaimSpec:
    """The claim being built and the pod that uses it (``containers`` containers sharing the claim)."""

    template_name: str = "built-claim"
    pod_name: str = "built-claim-pod"
    requests: list[Request] = field(default_factory=lambda: [Request()])
    constraints: list[Constraint] = field(default_factory=list)
    sharing: Sharing | None = None
    containers: int = 1
    image: str = DEFAULT_IMAGE
    extra_config: list[dict] = field(default_factory=list)  # config entries drawb does not edit, kept as read

    def request(self, name: str) -> Request:
        """The request named ``name``, or a BuildError naming those there are."""
        for request in self.requests:
            if request.name == name:
                return request
        raise BuildError(f"no request {name!r}", hint=f"requests: {', '.join(r.name for r in self.requests) or 'none'}")

    def devices(self) -> dict:
        """``spec.devices`` of the claim: requests, constraints, config."""
        names = [r.name for r in self.requests]
        if len(set(names)) != len(names):
            raise BuildError(f"two requests share a name ({', '.join(names)})", hint="give each request its own name")
        devices: dict = {"requests": [r.body() for r in self.requests]}
        if self.constraints:
            devices["constraints"] = [c.body() for c in self.constraints]
        config = copy.deepcopy(self.extra_config)
        if self.sharing is not None:
            config.append(self.sharing.config(self.sharing.requests or names, self._mig(self.sharing.requests or names)))
        if config:
            devices["config"] = config
        return devices

    def _mig(self, names: list[str]) -> bool:
        classes = {c.device_class for r in self.requests if r.name in names for c in r.choices}
        if len(classes) > 1 and MIG_CLASS in classes:
            raise BuildError("sharing covers MIG devices and full GPUs together; the driver configures them "
                             "with different kinds (MigDeviceConfig, GpuConfig)",
                             hint="share only the MIG requests, or only the GPU requests")
        return classes == {MIG_CLASS}

    def documents(self, namespace: str | None = None) -> list[dict]:
        """The ResourceClaimTemplate and the Pod, as a person would write them."""
        if int(self.containers) < 1:
            raise BuildError(f"{self.containers} containers: the pod needs at least one")
        template: dict = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                          "metadata": {"name": self.template_name}, "spec": {"spec": {"devices": self.devices()}}}
        many = int(self.containers) > 1
        containers = [
            {"name": f"ctr-{i}" if many else "cuda", "image": self.image,
             "command": ["bash", "-c", "nvidia-smi -L; trap 'exit 0' TERM; sleep infinity & wait"] if many
             else ["nvidia-smi", "-L"],
             "resources": {"claims": [{"name": POD_CLAIM}]}}
            for i in range(int(self.containers))
        ]
        pod: dict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": self.pod_name},
                     "spec": {"resourceClaims": [{"name": POD_CLAIM, "resourceClaimTemplateName": self.template_name}],
                              "containers": containers}}
        if not many:
            pod["spec"]["restartPolicy"] = "Never"
        if namespace:
            for doc in (template, pod):
                doc["metadata"]["namespace"] = namespace
        return [template, pod]
