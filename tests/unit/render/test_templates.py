"""Every bundled template renders, with its defaults and with its example values, into valid manifests."""

from __future__ import annotations

import pytest

from drawb.render import get_template, list_templates, read_export, render

TEMPLATES = list_templates()
CASES = [(t.name, {}) for t in TEMPLATES] + [(t.name, t.example) for t in TEMPLATES]


def _ids(case):
    return f"{case[0]}-{'example' if case[1] else 'defaults'}"


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_renders_and_validates(case, version, compile_selector):
    name, values = case
    r = render(name, values, namespace="drawb-test", kubernetes_version=version, compile_selector=compile_selector)
    assert r.documents and not [i for i in r.issues if i.level == "error"]
    for key, value in values.items():
        assert r.values[key] == value or str(r.values[key]) == str(value)


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_exported_yaml_round_trips(case, tmp_path, compile_selector):
    name, values = case
    r = render(name, values, namespace="drawb-test", compile_selector=compile_selector)
    path = r.export(tmp_path / "out.yaml")
    text = path.read_text()
    back = read_export(text)
    assert back.documents == r.documents
    assert (back.template, back.namespace) == (name, "drawb-test")
    again = render(back.template, back.values, namespace=back.namespace, compile_selector=compile_selector)
    assert again.documents == r.documents
    assert again.export(tmp_path / "again.yaml").read_text() == text


def test_key_order_is_stable_and_readable(compile_selector):
    text = render("single-gpu", compile_selector=compile_selector).yaml
    first = [line for line in text.splitlines() if line and not line.startswith((" ", "-"))][:4]
    assert first == ["apiVersion: resource.k8s.io/v1", "kind: ResourceClaimTemplate", "metadata:", "spec:"]
    assert text.count("---") == 2


def test_mig_profile_selects_the_profile(compile_selector):
    r = render("mig-profile", {"profile": "3g.40gb", "count": 2}, compile_selector=compile_selector)
    devices = r.documents[0]["spec"]["spec"]["devices"]
    exactly = devices["requests"][0]["exactly"]
    assert exactly["deviceClassName"] == "mig.nvidia.com" and exactly["count"] == 2
    assert exactly["selectors"][0]["cel"]["expression"] == "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"
    assert devices["constraints"] == [{"requests": ["mig"], "matchAttribute": "gpu.nvidia.com/parentUUID"}]


def test_multi_gpu_constraints(compile_selector):
    devices = render("multi-gpu-one-node", {"count": 4}, compile_selector=compile_selector).documents[0]["spec"]["spec"]["devices"]
    assert devices["requests"][0]["exactly"]["count"] == 4
    assert [c.get("matchAttribute") or c.get("distinctAttribute") for c in devices["constraints"]] == [
        "gpu.nvidia.com/productName", "resource.kubernetes.io/pcieRoot", "gpu.nvidia.com/uuid"]


def test_memory_selector_compares_quantities(compile_selector):
    doc = render("gpu-by-memory", {"min_memory": "80Gi"}, compile_selector=compile_selector).documents[0]
    expr = doc["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]["expression"]
    assert expr == "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"


def test_first_available_keeps_the_order_of_preference(compile_selector):
    doc = render("first-available", compile_selector=compile_selector).documents[0]
    subs = doc["spec"]["spec"]["devices"]["requests"][0]["firstAvailable"]
    assert [s["name"] for s in subs] == ["h100", "a100", "any"]
    assert "selectors" not in subs[-1]
    assert subs[0]["selectors"][0]["cel"]["expression"].endswith(".productName.contains('H100')")


def test_sharing_configs(compile_selector):
    ts = render("time-slicing", {"interval": "Short"}, compile_selector=compile_selector).documents[0]
    mps = render("mps", {"thread_percentage": 30, "pinned_memory_limit": "2Gi"},
                 compile_selector=compile_selector).documents[0]
    ts_sharing = ts["spec"]["spec"]["devices"]["config"][0]["opaque"]["parameters"]["sharing"]
    mps_sharing = mps["spec"]["spec"]["devices"]["config"][0]["opaque"]["parameters"]["sharing"]
    assert ts_sharing == {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Short"}}
    assert mps_sharing == {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 30,
                                                            "defaultPinnedDeviceMemoryLimit": "2Gi"}}


def test_extended_resource_pod_is_a_plain_legacy_pod(compile_selector):
    cls, pod = render("extended-resource", compile_selector=compile_selector).documents
    assert cls["spec"]["extendedResourceName"] == "nvidia.com/gpu"
    assert "resourceClaims" not in pod["spec"]
    assert pod["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 1}}


def test_admin_access_and_workloads(compile_selector):
    claim = render("admin-access", compile_selector=compile_selector).documents[0]
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] is True
    job = render("job", {"completions": 3}, compile_selector=compile_selector).documents[1]
    deploy = render("deployment", {"replicas": 4}, compile_selector=compile_selector).documents[1]
    assert job["spec"]["completions"] == 3 and deploy["spec"]["replicas"] == 4
    for workload in (job, deploy):
        assert workload["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"]


def test_rich_display(compile_selector):
    r = render("single-gpu", compile_selector=compile_selector)
    assert r._repr_markdown_().startswith("single-gpu: ResourceClaimTemplate/single-gpu, Pod/cuda-check\n")
    assert "```yaml" in r._repr_markdown_()
    assert "<pre>" in r._repr_html_() and "cuda-check" in r._repr_html_()
    assert get_template("single-gpu").param("pod_name").default == "cuda-check"


def test_first_available_can_be_pinned_to_nodes(compile_selector):
    pod = render("first-available", {"nodes": "node-a, node-b"}, compile_selector=compile_selector).documents[1]
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]} for node in ("node-a", "node-b")
    ]
    unpinned = render("first-available", compile_selector=compile_selector).documents[1]
    assert "affinity" not in unpinned["spec"]
