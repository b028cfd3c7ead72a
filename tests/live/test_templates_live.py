"""Every bundled template against the real API server (server-side dry run), and real allocations.

Each template is rendered with its defaults and with its example values, validated by drawb, and
applied through drawb's Cluster protocol (KubeCluster) as a server-side dry run. The server's answer
must keep every field drawb rendered, except fields drawb warned about (feature-gated fields the
server drops when the gate is off). Where the simulated scenario has the hardware, the manifests are
applied for real and the real scheduler's allocation is checked.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from drawb.render import Rendered, list_templates, render
from drawb.testing.api import Api, path_for
from drawb.testing.waiting import wait_for

pytestmark = pytest.mark.live

TEMPLATES = list_templates()
CASES = [(t.name, "defaults", {}) for t in TEMPLATES] + [(t.name, "example", t.example) for t in TEMPLATES]
ADMIN_LABEL = "resource.kubernetes.io/admin-access"


def _unique(name: str, values: dict, namespace: str) -> dict:
    """Cluster-scoped names (DeviceClass) made unique per test, so tests cannot collide."""
    if name == "extended-resource":
        base = values.get("class_name", "legacy-gpu.drawb.example")
        return {**values, "class_name": f"{namespace}.{base}"}
    return values


def dropped_fields(rendered, answer, path: str = "") -> list[str]:
    """Paths of fields in ``rendered`` that the server's ``answer`` lacks or changed."""
    if isinstance(rendered, dict):
        if not isinstance(answer, dict):
            return [path]
        out = []
        for key, value in rendered.items():
            sub = f"{path}.{key}" if path else key
            out += dropped_fields(value, answer[key], sub) if key in answer else [sub]
        return out
    if isinstance(rendered, list):
        if not isinstance(answer, list) or len(answer) != len(rendered):
            return [path]
        return [p for i, (r, a) in enumerate(zip(rendered, answer)) for p in dropped_fields(r, a, f"{path}[{i}]")]
    return [] if str(rendered) == str(answer) else [path]


@pytest.mark.parametrize(("name", "which", "values"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_server_side_dry_run_accepts_every_template(name, which, values, kube, namespace, control_plane):
    api = control_plane.api()
    if name == "admin-access":
        api.request("PATCH", path_for("Namespace", namespace), {"metadata": {"labels": {ADMIN_LABEL: "true"}}},
                    content_type="application/merge-patch+json")
    r = render(name, _unique(name, values, namespace), namespace=namespace, cluster=kube)
    answers = r.apply(kube, dry_run=True)

    assert [(a["kind"], a["metadata"]["name"]) for a in answers] == [
        (d["kind"], d["metadata"]["name"]) for d in r.documents]
    for doc, answer in zip(r.documents, answers):
        label = f"{doc['kind']}/{doc['metadata']['name']}"
        warned = {w.path for w in r.warnings if w.document == label}
        lost = [p for p in dropped_fields(doc, answer) if p not in warned]
        assert not lost, f"{label}: the API server dropped or changed {lost}"
    for doc in r.documents:  # a dry run creates nothing
        assert kube.get(doc["kind"], doc["metadata"]["name"], doc["metadata"].get("namespace")) is None


def test_admin_access_without_the_namespace_label_is_refused_by_drawb_and_the_server(kube, namespace):
    from drawb.cluster.protocol import ClusterError
    from drawb.render import ManifestInvalid

    lacks = f"admin-access: true. label on the containing namespace; namespace '{namespace}' lacks it"
    with pytest.raises(ManifestInvalid, match=lacks):
        render("admin-access", namespace=namespace, cluster=kube)
    unchecked = render("admin-access", namespace=namespace)  # no cluster: the label cannot be checked
    with pytest.raises(ClusterError, match="admin-access"):
        kube.apply(unchecked.documents, dry_run=True)


# --- real allocations -------------------------------------------------------------------------------


def _attr(device: dict, name: str):
    return next(iter(device["attributes"][name].values()))


def allocated(api: Api, r: Rendered, claim: str = "") -> list[tuple[dict, dict, str]]:
    """Apply for real, wait for the pod's claim to be allocated; (result, published device, node) per device."""
    pod = next(d for d in r.documents if d["kind"] == "Pod")
    namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    entry = claim or pod["spec"]["resourceClaims"][0]["name"]

    def claim_allocated():
        obj = api.get(path_for("Pod", name, namespace))
        statuses = {s["name"]: s.get("resourceClaimName") for s in obj.get("status", {}).get("resourceClaimStatuses", [])}
        spec_entry = next(e for e in obj["spec"]["resourceClaims"] if e["name"] == entry)
        claim_name = spec_entry.get("resourceClaimName") or statuses.get(entry)
        if not claim_name:
            return None
        rc = api.get_or_none(path_for("ResourceClaim", claim_name, namespace))
        return rc if rc and rc.get("status", {}).get("allocation") else None

    rc = wait_for(claim_allocated, timeout=60, what=f"claim of pod {name} allocated")
    slices = api.get(path_for("ResourceSlice"))["items"]
    out = []
    for result in rc["status"]["allocation"]["devices"]["results"]:
        for s in slices:
            if (s["spec"]["driver"], s["spec"]["pool"]["name"]) == (result["driver"], result["pool"]):
                for d in s["spec"].get("devices", []):
                    if d["name"] == result["device"]:
                        out.append((result, d, s["spec"]["nodeName"]))
    assert len(out) == len(rc["status"]["allocation"]["devices"]["results"]), "allocated devices not published"
    return out


@pytest.fixture
def applied(kube, control_plane) -> Iterator:
    """Apply rendered manifests for real; delete them (and wait for their devices to be free) afterwards."""
    done: list[Rendered] = []

    def apply(name: str, values: dict, namespace: str) -> Rendered:
        r = render(name, values, namespace=namespace, cluster=kube)
        r.apply(kube, dry_run=False)
        done.append(r)
        return r

    yield apply
    api = control_plane.api()
    for r in done:
        for doc in reversed(r.documents):
            meta = doc["metadata"]
            kube.delete(doc["kind"], meta["name"], meta.get("namespace"))
        for doc in r.documents:
            meta = doc["metadata"]
            if doc["kind"] == "Pod":
                wait_for(lambda: api.get_or_none(path_for("Pod", meta["name"], meta["namespace"])) is None,
                         what=f"pod {meta['name']} gone")
        namespace = r.documents[0]["metadata"].get("namespace")
        wait_for(lambda: not api.get(path_for("ResourceClaim", namespace=namespace))["items"],
                 what="claims of the test released")


@pytest.mark.parametrize(("values", "profile", "count"), [({}, "1g.10gb", 1), ({"profile": "3g.40gb", "count": 2},
                                                                                  "3g.40gb", 2)])
def test_mig_template_gets_mig_devices_of_the_asked_profile(values, profile, count, applied, namespace,
                                                            control_plane):
    r = applied("mig-profile", values, namespace)
    devices = allocated(control_plane.api(), r)
    assert len(devices) == count
    assert {(_attr(d, "type"), _attr(d, "profile")) for _, d, _ in devices} == {("mig", profile)}
    assert len({_attr(d, "parentUUID") for _, d, _ in devices}) == 1, "same_gpu keeps them on one GPU"


@pytest.mark.parametrize("values", [{"distinct_attribute": []}, {"count": 4, "same_pcie_root": False,
                                                                   "distinct_attribute": []}])
def test_match_attribute_template_gets_gpus_of_one_product_on_one_node(values, applied, namespace, control_plane):
    r = applied("multi-gpu-one-node", values, namespace)
    devices = allocated(control_plane.api(), r)
    count = r.values["count"]
    assert len(devices) == count and len({d["name"] for _, d, _ in devices}) == count
    assert len({node for _, _, node in devices}) == 1
    assert len({_attr(d, "productName") for _, d, _ in devices}) == 1
    if r.values["same_pcie_root"]:
        assert len({_attr(d, "resource.kubernetes.io/pcieRoot") for _, d, _ in devices}) == 1


H100_NODE, L4_NODE = "dgx-h100-02", "gke-dra-l4-pool-5c7e8f21-q9zt"


@pytest.mark.parametrize(("values", "subrequest", "product"), [
    ({"nodes": [H100_NODE]}, "h100", "NVIDIA H100 80GB HBM3"),
    ({"products": ["B200", "H100"], "nodes": [H100_NODE]}, "h100", "NVIDIA H100 80GB HBM3"),
    ({"products": ["H200", "L4"], "nodes": [L4_NODE]}, "l4", "NVIDIA L4"),
    ({"nodes": [L4_NODE]}, "any", "NVIDIA L4"),
])
def test_first_available_picks_the_first_alternative_that_exists(values, subrequest, product, applied, namespace,
                                                                 control_plane, scenario):
    """On a node, the scheduler takes the first alternative that node can satisfy (1.34 does not rank nodes by it)."""
    assert {H100_NODE, L4_NODE} <= {s["spec"].get("nodeName") for s in scenario.resource_slices}
    r = applied("first-available", values, namespace)
    [(result, device, node)] = allocated(control_plane.api(), r)
    assert node == values["nodes"][0]
    assert result["request"] == f"gpu/{subrequest}"
    assert _attr(device, "productName") == product


def test_memory_template_gets_a_gpu_with_enough_memory(applied, namespace, control_plane):
    r = applied("gpu-by-memory", {"min_memory": "100Gi"}, namespace)
    [(_, device, _)] = allocated(control_plane.api(), r)
    assert _attr(device, "productName") == "NVIDIA H200"


def test_all_gpus_template_takes_every_matching_gpu_of_a_node(applied, namespace, control_plane, scenario):
    r = applied("all-gpus", {"product": "L4"}, namespace)
    devices = allocated(control_plane.api(), r)
    l4 = [d for s in scenario.resource_slices for d in s["spec"].get("devices", [])
          if "L4" in str(d.get("attributes", {}).get("productName", {}).get("string", ""))]
    assert len(devices) == len(l4) > 1
    assert {_attr(d, "productName") for _, d, _ in devices} == {"NVIDIA L4"}


def test_seed_template_gets_one_full_gpu(applied, namespace, control_plane):
    r = applied("single-gpu", {}, namespace)
    [(result, device, node)] = allocated(control_plane.api(), r)
    assert result["request"] == "gpu" and _attr(device, "type") == "gpu"


# --- drawb's refusals agree with the API server's -------------------------------------------------------


def _claim(devices: dict) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "broken"},
            "spec": {"devices": devices}}


_GPU = {"deviceClassName": "gpu.nvidia.com"}
BROKEN = {
    "beta-style request": {"requests": [{"name": "gpu", "deviceClassName": "gpu.nvidia.com"}]},
    "count as a string": {"requests": [{"name": "gpu", "exactly": {**_GPU, "count": "2"}}]},
    "constraint names no request": {"requests": [{"name": "gpu", "exactly": _GPU}],
                                    "constraints": [{"requests": ["gpus"], "matchAttribute": "gpu.nvidia.com/uuid"}]},
    "config names no request": {"requests": [{"name": "gpu", "exactly": _GPU}],
                                "config": [{"requests": ["tpu"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {
                                    "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}}}]},
    "capacity 40GB": {"requests": [{"name": "gpu", "exactly": {**_GPU, "capacity": {"requests": {"memory": "40GB"}}}}]},
    "selector does not compile": {"requests": [{"name": "gpu", "exactly": {**_GPU, "selectors": [
        {"cel": {"expression": "device.capacity['gpu.nvidia.com'].memory >= '40Gi'"}}]}}]},
    "All with a count": {"requests": [{"name": "gpu", "exactly": {**_GPU, "allocationMode": "All", "count": 2}}]},
    "request name twice": {"requests": [{"name": "gpu", "exactly": _GPU}, {"name": "gpu", "exactly": _GPU}]},
}


@pytest.mark.parametrize("case", list(BROKEN), ids=list(BROKEN))
def test_what_drawb_refuses_the_api_server_refuses_too(case, kube, namespace):
    from drawb.cluster.protocol import ClusterError
    from drawb.render import validate_documents

    doc = _claim(BROKEN[case])
    doc["metadata"]["namespace"] = namespace
    errors = [i for i in validate_documents([doc], kubernetes_version="1.34", cluster=kube) if i.level == "error"]
    assert errors, f"drawb accepted {case}"
    with pytest.raises(ClusterError):
        kube.apply([doc], dry_run=True)


def test_magic_renders_against_the_connected_cluster(control_plane, namespace, capsys, shell):
    """``%dra connect --kubeconfig`` then ``%dra render``: classes checked in that cluster, dry run by its server."""
    run = shell.run
    run(f"%dra connect --kubeconfig {control_plane.kubeconfig}")
    r = run(f"%dra render mig-profile --set profile=3g.40gb --dry-run -n {namespace}")
    assert r.applied == "dry run" and r.server_objects[0]["metadata"]["namespace"] == namespace
    # the API server stores a claim whose class is missing (its pods wait for the class): a warning, not a refusal
    missing = run(f"%dra render single-gpu --set device_class=gpu.example.com -n {namespace}")
    warned = "\n".join(str(w) for w in missing.warnings)
    assert "DeviceClass 'gpu.example.com' is not installed in the connected cluster" in warned, warned
    assert "mig.nvidia.com" in warned  # the classes the cluster does have
