"""``preview`` and ``capacity`` on the simulated cluster, checked against what its scheduler then does."""

from __future__ import annotations

import copy

import pytest

from drawb.cli import main
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.commands.registry import run_line
from drawb.plan import NoClaims, ObjectNotFound, OtherNamespace
from drawb.plan.manifests import NotAManifest
from drawb.session import Session

NODES = ["a100-sxm-node-01", "dgx-h100-02", "gke-dra-l4-pool-5c7e8f21-q9zt", "hgx-h200-03"]
FULL_GPUS = {"a100-sxm-node-01": 8, "dgx-h100-02": 4, "gke-dra-l4-pool-5c7e8f21-q9zt": 4, "hgx-h200-03": 8}


def template(name: str = "one", count: int = 1, device_class: str = "gpu.nvidia.com", selector: str | None = None,
             namespace: str = "default") -> dict:
    exactly: dict = {"deviceClassName": device_class, "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def claim(name: str, count: int = 1, namespace: str = "default") -> dict:
    body = template(name, count, namespace=namespace)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": body["metadata"],
            "spec": body["spec"]["spec"]}


def pod(name: str, *, template_name: str | None = "one", claim_name: str | None = None, **spec) -> dict:
    entry = {"name": "gpu", "resourceClaimName": claim_name} if claim_name else \
        {"name": "gpu", "resourceClaimTemplateName": template_name}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"resourceClaims": [entry], **spec,
                     "containers": [{"name": "c", "image": "cuda", "command": ["sleep", "infinity"],
                                     "resources": {"claims": [{"name": "gpu"}]}}]}}


@pytest.fixture
def session():
    return Session(_cluster=SimCluster(workloads=False, clock=ManualClock()))


def allocated_devices(session: Session, pod_name: str) -> tuple[str | None, list[str]]:
    """Where the simulated scheduler put the pod, and the devices of its claims."""
    cluster = session.cluster
    placed = cluster.get("Pod", pod_name, "default")
    names = {s["resourceClaimName"] for s in placed.get("status", {}).get("resourceClaimStatuses") or []}
    names |= {e["resourceClaimName"] for e in placed["spec"]["resourceClaims"] if e.get("resourceClaimName")}
    devices = []
    for name in sorted(names):
        allocation = (cluster.get("ResourceClaim", name, "default").get("status") or {}).get("allocation") or {}
        devices += [r["device"] for r in allocation.get("devices", {}).get("results", [])]
    return placed["spec"].get("nodeName"), devices


def picked(report) -> tuple[str, list[str]]:
    rows = report.frame[report.frame["pick"]]
    return rows["node"].iloc[0], rows["device"].tolist()


def test_template_preview_is_where_the_scheduler_puts_the_pod(session):
    session.cluster.apply([template("two", count=2)])
    report = run_line(session, "preview template/two")
    assert report.data["fits"] == NODES
    assert "fits on 4 of 4 nodes" in report.sentence and "simulated scheduler picks a100-sxm-node-01" in report.sentence
    assert "simulated cluster" in report.sentence
    session.cluster.apply([pod("p", template_name="two")])
    assert allocated_devices(session, "p") == picked(report) == ("a100-sxm-node-01", ["gpu-0", "gpu-1"])


def test_claim_preview_and_devices_already_allocated(session):
    session.cluster.apply([template("eight", count=8), pod("big", template_name="eight"), claim("mine", count=2)])
    assert allocated_devices(session, "big")[0] == "a100-sxm-node-01"  # every GPU of the A100 node in use
    report = run_line(session, "preview claim/mine")
    assert "a100-sxm-node-01" not in report.data["fits"]
    assert report.data["rejected"] == {"cannot allocate all claims": 1}
    session.cluster.apply([pod("user", claim_name="mine")])
    assert allocated_devices(session, "user") == picked(report) == ("dgx-h100-02", ["gpu-0", "gpu-1"])


def test_pod_preview_honours_node_selector_and_affinity(session, tmp_path):
    selector = pod("sel", nodeSelector={"nvidia.com/gpu.product": "NVIDIA-H200"})
    affinity = pod("aff", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn",
                                                     "values": ["a100-sxm-node-01", "dgx-h100-02"]}]}]}}})
    session.cluster.apply([template()])
    for body, fits in ((selector, ["hgx-h200-03"]), (affinity, NODES[2:])):
        path = tmp_path / f"{body['metadata']['name']}.yaml"
        import yaml

        path.write_text(yaml.safe_dump(body))
        report = run_line(session, f"preview -f {path}")
        assert report.data["fits"] == fits
        assert report.data["rejected"] == {"node(s) didn't match Pod's node affinity/selector": 4 - len(fits)}
        session.cluster.apply([body])
        assert allocated_devices(session, body["metadata"]["name"]) == picked(report)


def test_pod_in_the_cluster_bound_and_pending(session):
    session.cluster.apply([template(), pod("runs")])
    report = run_line(session, "preview runs")
    assert report.sentence.startswith("pod/runs is already bound to node a100-sxm-node-01")
    big = template("nine", count=9)
    session.cluster.apply([big, pod("waits", template_name="nine")])
    report = run_line(session, "preview pod/waits")
    assert report.data["fits"] == [] and report.exit_status == 1
    assert "fits on none of the 4 nodes now: 4 cannot allocate all claims" in report.sentence


def test_render_preview(session):
    report = run_line(session, "render mig-profile --set profile=2g.20gb --preview")
    assert report.data["target"] == "pod/mig-pod" and report.data["fits"] == ["dgx-h100-02"]
    assert report.frame["profile"].tolist() == ["2g.20gb"]


def test_selector_error_is_the_schedulers_error(session):
    session.cluster.apply([template("broken", selector='device.attributes["gpu.nvidia.com"].nosuch == "x"')])
    report = run_line(session, "preview template/broken")
    assert report.exit_status == 1 and "the scheduler would stop with an error" in report.sentence
    assert "nosuch" in report.data["error"]


def test_capacity_counts_what_the_scheduler_then_places(session):
    session.cluster.apply([template()])
    report = run_line(session, "capacity template/one")
    assert report.data["total"] == sum(FULL_GPUS.values())
    assert dict(zip(report.frame["node"], report.frame["copies"])) == FULL_GPUS
    assert "devices for gpu (gpu.nvidia.com)" in report.sentence
    assert placed_until_pending(session, "one") == [n for n, count in FULL_GPUS.items() for _ in range(count)]


def placed_until_pending(session: Session, template_name: str) -> list[str]:
    """Nodes of copies placed one by one by the simulated scheduler, until one stays Pending."""
    nodes = []
    while len(nodes) < 100:
        name = f"copy-{template_name}-{len(nodes)}"
        session.cluster.apply([pod(name, template_name=template_name)])
        node = allocated_devices(session, name)[0]
        if node is None:
            return sorted(nodes)
        nodes.append(node)
    raise AssertionError("no copy stayed Pending")


def test_capacity_of_mig_reports_fragmentation(session):
    session.cluster.apply([template("mig", device_class="mig.nvidia.com",
                                    selector="device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")])
    report = run_line(session, "capacity template/mig")
    assert report.data["total"] == 9 and report.data["nodes_with_room"] == 1
    row = report.frame[report.frame["node"] == "dgx-h100-02"].iloc[0]
    assert row["copies"] == 9 and "2g.20gb" in row["free_mig"] and "1g.10gb" not in row["free_mig"]
    assert "unusable by a copy" in report.sentence
    assert placed_until_pending(session, "mig") == ["dgx-h100-02"] * 9


def test_capacity_json_on_the_cli(session, capsys, monkeypatch):
    import json

    monkeypatch.setattr(Session, "connect", lambda self, **kw: setattr(self, "_cluster", session.cluster))
    session.cluster.apply([template()])
    assert main(["capacity", "template/one", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["total"] == 24 and out["rows"][0]["node"] == "a100-sxm-node-01"


# --- bad input, both front ends ------------------------------------------------------------------


def bad_inputs(tmp_path) -> list[tuple[str, type]]:
    (tmp_path / "notes.txt").write_text("just: [some, text\n")
    (tmp_path / "config.yaml").write_text("a: 1\nb: 2\n")
    return [
        ("preview pod/nope", ObjectNotFound),
        ("capacity template/nope", ObjectNotFound),
        ("preview nothing-by-that-name", ObjectNotFound),
        ("preview pod/no-claims", NoClaims),
        ("preview claim/elsewhere", OtherNamespace),
        ("capacity claim/elsewhere", OtherNamespace),
        (f"preview -f {tmp_path / 'notes.txt'}", NotAManifest),
        (f"capacity -f {tmp_path / 'config.yaml'}", NotAManifest),
        (f"preview -f {tmp_path / 'missing.yaml'}", NotAManifest),
        ("preview pod/uses-missing-claim", ObjectNotFound),
    ]


def _setup_bad(cluster) -> None:
    plain = pod("no-claims")
    plain["spec"].pop("resourceClaims")
    plain["spec"]["containers"][0]["resources"] = {}
    other = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}  # namespaces must exist
    cluster.apply([other, plain, claim("elsewhere", namespace="other"), pod("uses-missing-claim", claim_name="ghost")])


def test_bad_inputs_are_named_errors_in_the_magic_path(session, tmp_path):
    _setup_bad(session.cluster)
    for line, error in bad_inputs(tmp_path):
        with pytest.raises(error) as caught:
            run_line(session, line)
        assert caught.value.hint, line


def test_bad_inputs_on_the_cli_exit_2_with_the_name(session, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(Session, "connect", lambda self, **kw: setattr(self, "_cluster", session.cluster))
    _setup_bad(session.cluster)
    for line, error in bad_inputs(tmp_path):
        assert main(line.split()) == 2, line
        err = capsys.readouterr().err
        assert err.startswith(f"{error.__name__}: ") and "Hint: " in err, (line, err)
        assert "%dra" not in err


def test_a_file_claim_of_another_namespace(session, tmp_path):
    import yaml

    body = pod("p", template_name="t")
    other = template("t", namespace="team-b")
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump_all([body, other]))
    with pytest.raises(OtherNamespace, match="ResourceClaimTemplate 't' of .* is in namespace 'team-b', not 'default'"):
        run_line(session, f"preview -f {path}")
    assert copy.deepcopy(body) == body


def test_every_row_describes_its_own_device(session):
    """product, memory and profile of each row are those its node publishes for that device, also on a
    second call (the descriptions remembered per node view)."""
    session.cluster.apply([template("any-two", count=2, device_class="mig.nvidia.com"), template("four", count=4)])
    published = {}
    for rs in session.cluster.list("ResourceSlice"):
        for device in rs["spec"].get("devices") or []:
            attributes = device.get("attributes") or {}
            value = lambda key: next(iter((attributes.get(key) or {None: None}).values()))
            published[(rs["spec"]["nodeName"], rs["spec"]["pool"]["name"], device["name"])] = (
                value("productName"), value("profile"))
    for target in ("template/any-two", "template/four", "template/any-two"):
        frame = run_line(session, f"preview {target}").frame
        assert len(frame) >= 2
        rows = {(r.node, r.pool, r.device): (r.product, r.profile) for r in frame.itertuples()}
        assert rows == {key: published[key] for key in rows}
        assert frame["memory"].notna().all()
