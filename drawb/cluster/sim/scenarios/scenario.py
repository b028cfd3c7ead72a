"""A simulated cluster's scenario: its hardware and seeded objects as the API server would hold them."""

from __future__ import annotations

from dataclasses import dataclass, field

from drawb.cluster.sim.kubelet import DEFAULT_PULL_SECONDS
from drawb.cluster.sim.publish import GpuNode
from drawb.errors import PROG, DrawbError


class ScenarioError(DrawbError, ValueError):
    """A scenario name or file that cannot be used."""

    hint = f"`{PROG} scenarios` lists them"


@dataclass
class Scenario:
    """A simulated cluster's hardware as the API server would hold it."""

    name: str
    description: str
    gpu_nodes: list[GpuNode]
    nodes: list[dict]
    resource_slices: list[dict]
    device_classes: list[dict]
    feature_gates: dict[str, bool] = field(default_factory=dict)  # gates set on the simulated API server
    server_version: str | None = None  # the Kubernetes version it runs ("1.36", "v1.36.1"; None: drawb's default)
    objects: list[dict] = field(default_factory=list)  # more objects to seed: namespaces, claims, pods, ...
    # The slices were made by drawb.gpu.driver, which writes no feature-gated field: seeding need not
    # look for such fields in their (up to 200,000) devices. False for slices read from elsewhere.
    slices_as_built: bool = False
    image_pull_seconds: float = DEFAULT_PULL_SECONDS  # how long a node takes to pull an image it lacks
    # drawb's own nodes, whose kubelets run the simulated cluster's version (False: a snapshot's nodes keep theirs)
    simulated_kubelets: bool = True

    @property
    def device_count(self) -> int:
        """GPU and MIG devices published by ``gpu.nvidia.com``."""
        return sum(
            len(s["spec"]["devices"]) for s in self.resource_slices if s["spec"]["driver"] == "gpu.nvidia.com"
        )

