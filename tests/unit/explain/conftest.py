"""Hand-built situations on the simulated cluster for ``why``: objects applied through the Cluster
protocol, the simulated scheduler run (ManualClock: no waiting for image pulls), then explained."""

from __future__ import annotations

import copy

import pytest

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.session import Session

H200 = "hgx-h200-03"
A100 = "a100-sxm-node-01"
H100 = "dgx-h100-02"
L4 = "gke-dra-l4-pool-5c7e8f21-q9zt"
PRODUCT = "device.attributes['gpu.nvidia.com'].productName"


def claim(name: str, *requests: dict, constraints: list | None = None, ns: str = "default") -> dict:
    devices: dict = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": devices}}


def exactly(name: str, cls: str = "gpu.nvidia.com", count: int = 1, selectors: tuple[str, ...] = (), **extra) -> dict:
    body = {"deviceClassName": cls, **({"count": count} if extra.get("allocationMode") != "All" else {}), **extra}
    if selectors:
        body["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": body}


def pod(name: str, *claims: str, ns: str = "default", templates: dict | None = None, **spec) -> dict:
    entries = [{"name": f"c{i}", "resourceClaimName": c} for i, c in enumerate(claims)]
    entries += [{"name": entry, "resourceClaimTemplateName": t} for entry, t in (templates or {}).items()]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "main", "image": "ubuntu:22.04",
                                     "resources": {"claims": [{"name": e["name"]} for e in entries]}}],
                     "resourceClaims": entries, **spec}}


class Situation:
    """A simulated cluster and a Session on it."""

    def __init__(self, gates: dict[str, bool] | None = None, edit=None):
        scenario = copy.deepcopy(build_scenario("default"))
        scenario.feature_gates = dict(gates or {})
        if edit is not None:
            edit(scenario)
        self.cluster = SimCluster(scenario, clock=ManualClock())
        self.session = Session()
        self.session._cluster = self.cluster

    def apply(self, *objects: dict) -> None:
        self.cluster.apply(list(objects))

    def why(self, target: str, namespace: str = "default"):
        from drawb.commands.registry import run_line

        return run_line(self.session, f"why {target} -n {namespace}")


@pytest.fixture
def sim() -> Situation:
    return Situation()


@pytest.fixture
def make_sim():
    return Situation
