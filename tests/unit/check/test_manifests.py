"""The objects of a check: labelled, uniquely named, restricted-PSS security, payload in every container."""

from __future__ import annotations

import pytest

from drawb.check import RUN_LABEL, build_objects
from drawb.check.manifests import CONTAINER_SECURITY, POD_SECURITY
from drawb.cluster.sim.cluster import SimCluster
from drawb.errors import UsageError


@pytest.fixture(scope="module")
def sim():
    return SimCluster()


def labels_of(obj):
    return obj["metadata"]["labels"]


@pytest.mark.parametrize("template", ["single-gpu", "mig-profile", "multi-gpu-one-node", "shared-claim"])
def test_bundled_templates_become_labelled_restricted_check_pods(sim, template):
    objects = build_objects(sim, namespace="team", template=template, run_id="abc1234567")
    template_doc, pod = objects.documents
    for obj in objects.documents:
        assert labels_of(obj) == {"app.kubernetes.io/managed-by": "drawb", RUN_LABEL: "abc1234567"}
        assert obj["metadata"]["name"].endswith("-abc1234567") and obj["metadata"]["namespace"] == "team"
    refs = [e["resourceClaimTemplateName"] for e in pod["spec"]["resourceClaims"]]
    assert refs == [template_doc["metadata"]["name"]]
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["securityContext"] == POD_SECURITY
    for container in pod["spec"]["containers"]:
        assert container["command"] == ["nvidia-smi", "-L"] and "args" not in container
        assert container["securityContext"] == CONTAINER_SECURITY
    assert len(pod["spec"]["containers"]) == (2 if template == "shared-claim" else 1)


def test_two_checks_never_share_a_name(sim):
    first = build_objects(sim, namespace="team", template="single-gpu")
    second = build_objects(sim, namespace="team", template="single-gpu")
    names = lambda o: {d["metadata"]["name"] for d in o.documents}  # noqa: E731
    assert first.run_id != second.run_id and not names(first) & names(second)


def test_selector_with_class_count_payload_image_and_node(sim):
    objects = build_objects(sim, namespace="team", selector="device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
                            device_class="mig.nvidia.com", count=2, payload="query", image="ubuntu:24.04",
                            node="dgx-h100-02")
    template, pod = objects.documents
    exactly = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly["deviceClassName"] == "mig.nvidia.com" and exactly["count"] == 2
    assert exactly["selectors"][0]["cel"]["expression"].endswith("'1g.10gb'")
    container = pod["spec"]["containers"][0]
    assert container["image"] == "ubuntu:24.04"
    assert container["command"] == ["nvidia-smi", "--query-gpu=index,uuid,name,memory.total,driver_version",
                                    "--format=csv"]
    term = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["nodeSelectorTerms"] == [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                           "values": ["dgx-h100-02"]}]}]
    assert "nodeName" not in pod["spec"]


def test_a_bad_selector_is_refused_before_anything_is_applied(sim):
    with pytest.raises(UsageError, match="(?s)invalid.*ERROR: <input>:1:45"):
        build_objects(sim, namespace="default", selector="device.attributes['gpu.nvidia.com'].memory >")


def test_a_missing_claim_is_named_with_a_suggestion(sim):
    from drawb.check import ClaimNotFound

    with pytest.raises(ClaimNotFound, match="no ResourceClaim 'nope'"):
        build_objects(sim, namespace="gpu-demo", claim="nope")


def test_one_thing_at_a_time(sim):
    with pytest.raises(UsageError, match="one thing at a time"):
        build_objects(sim, namespace="default", template="single-gpu", claim="x")


def test_sample_payload_runs_the_listing_first(sim):
    objects = build_objects(sim, namespace="default", template="single-gpu", payload="sample",
                            command=["/cuda-samples/vectorAdd"], image="nvcr.io/nvidia/k8s/cuda-sample:vectoradd")
    assert objects.pod["spec"]["containers"][0]["command"] == ["sh", "-c", "nvidia-smi -L && /cuda-samples/vectorAdd"]


def test_rendered_manifests_are_checked_as_they_are(sim):
    from drawb import render

    rendered = render.render("single-gpu", {"device_class": "gpu.nvidia.com"}, namespace="team")
    objects = build_objects(sim, namespace="team", rendered=rendered, run_id="r1r1r1r1r1")
    assert [d["metadata"]["name"] for d in objects.documents] == ["single-gpu-r1r1r1r1r1", "cuda-check-r1r1r1r1r1"]
    assert objects.source == "rendered single-gpu"
