"""Templates whose fields are feature-gated in Kubernetes 1.34, on a control plane with those gates on.

With DRAConsumableCapacity and DRAExtendedResource enabled, the API server must keep
``distinctAttribute`` and ``extendedResourceName`` (with the gates off it drops them, which drawb
warns about), and the unmodified ``nvidia.com/gpu: 1`` pod must get a GPU through DRA.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from drawb.cluster.kube import KubeCluster
from drawb.render import render
from drawb.testing import build
from drawb.testing.api import path_for
from drawb.testing.cluster import LocalCluster
from drawb.testing.waiting import wait_for

pytestmark = pytest.mark.live

GATES = {"DRAConsumableCapacity": True, "DRAExtendedResource": True}


@pytest.fixture(scope="module")
def gated(tmp_path_factory) -> Iterator[LocalCluster]:
    """A second local control plane with the gates on, running the fake driver's default scenario."""
    cluster = LocalCluster(name=f"gates-{os.getpid()}", workdir=tmp_path_factory.mktemp("gated"),
                           bin_dir=build.build().bin_dir, feature_gates=GATES)
    try:
        cluster.up(scenario="default")
        yield cluster
    finally:
        cluster.down()


@pytest.fixture
def gated_ns(gated) -> Iterator[tuple[KubeCluster, str]]:
    """drawb's Cluster protocol over the gated plane, and a fresh namespace there."""
    api = gated.api()
    name = f"gates-{os.urandom(3).hex()}"
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    wait_for(lambda: api.get_or_none(path_for("ServiceAccount", "default", name)), what="default SA")
    kube = KubeCluster(kubeconfig=str(gated.kubeconfig))
    yield kube, name
    kube.close()
    api.delete(path_for("Namespace", name))


def test_distinct_attribute_survives_with_its_gate(gated_ns):
    kube, namespace = gated_ns
    r = render("multi-gpu-one-node", namespace=namespace, cluster=kube, kubernetes_version="1.34")
    [claim_template, _] = r.apply(kube, dry_run=True)
    constraints = claim_template["spec"]["spec"]["devices"]["constraints"]
    assert {"requests": ["gpus"], "distinctAttribute": "gpu.nvidia.com/uuid"} in constraints


def test_legacy_pod_gets_a_gpu_through_the_extended_resource_class(gated, gated_ns):
    kube, namespace = gated_ns
    r = render("extended-resource", {"class_name": f"{namespace}.legacy-gpu.drawb.example"}, namespace=namespace,
               cluster=kube)
    [device_class, _] = r.apply(kube, dry_run=True)
    assert device_class["spec"]["extendedResourceName"] == "nvidia.com/gpu"
    r.apply(kube, dry_run=False)
    api = gated.api()
    try:
        pod = wait_for(lambda: (p := api.get(path_for("Pod", "legacy-gpu-pod", namespace)))
                       .get("status", {}).get("extendedResourceClaimStatus") and p, timeout=60,
                       what="legacy pod given a DRA claim")
        claim = api.get(path_for("ResourceClaim", pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"],
                                 namespace))
        results = claim["status"]["allocation"]["devices"]["results"]
        assert len(results) == 1 and results[0]["driver"] == "gpu.nvidia.com"
        assert claim["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"] == "true"
    finally:
        kube.delete("Pod", "legacy-gpu-pod", namespace)
        kube.delete("DeviceClass", device_class["metadata"]["name"])
