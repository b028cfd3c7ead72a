"""The cluster map: which devices get which colour for a selector, MIG devices inside their GPU, the pool
summary of a large cluster, and the static files of ``drawb map --out``."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from drawb.cel import select
from drawb.cli import main
from drawb.map import ClusterMap, MapError, build_map
from drawb.map.svg import COLOURS
from drawb.session import Session
from tests.unit.browse import fixtures

SVG = "{http://www.w3.org/2000/svg}"
ONE_G = "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"


def _groups(svg: str) -> dict[str, ET.Element]:
    root = ET.fromstring(svg)
    return {g.get("data-key"): g for g in root.iter(f"{SVG}g") if g.get("data-key")}


def _fill(group: ET.Element) -> str:
    return group.find(f"{SVG}rect").get("fill")


def _title(group: ET.Element) -> str:
    return group.find(f"{SVG}title").text


@pytest.fixture(scope="module")
def small() -> ClusterMap:
    return build_map(fixtures.devices(), nodes=fixtures.NODES)


def key(pool: str, device: str) -> str:
    return f"gpu.nvidia.com/{pool}/{device}"


def test_states_without_a_selector(small):
    assert small.counts == {"free": 7, "allocated": 2, "tainted": 1, "erroring": 0, "not selected": 0}
    assert small.state_of(key("node-a", "gpu-1")) == "allocated"
    assert small.state_of(key("node-a", "gpu-2")) == "tainted"
    assert small.state_of(key("node-b", "gpu-0-mig-1g10gb-1")) == "allocated"
    groups = _groups(small.svg)
    for device_key, group in groups.items():
        if group.get("data-state"):
            assert _fill(group) == COLOURS[group.get("data-state")], device_key
            assert group.get("data-state") == small.state_of(device_key)
            assert f"drawb-map-{group.get('data-state')}" in group.get("class")


def test_mig_devices_are_drawn_inside_their_parent_gpu(small):
    groups = _groups(small.svg)
    parent = groups[key("node-a", "gpu-3")]
    inside = {g.get("data-key") for g in parent.iter(f"{SVG}g")} - {key("node-a", "gpu-3")}
    assert inside == {key("node-a", "gpu-3-mig-1g10gb-0"), key("node-a", "gpu-3-mig-3g40gb-4")}
    unpublished = groups["node-b/GPU-b0"]  # only its MIG devices are published
    assert "drawb-map-parent" in unpublished.get("class") and unpublished.get("data-state") is None
    assert {g.get("data-key") for g in unpublished.iter(f"{SVG}g")} - {"node-b/GPU-b0"} == {
        key("node-b", f"gpu-0-mig-{m}") for m in ("1g10gb-0", "1g10gb-1", "2g20gb-2")}
    [node_b] = [n for n in small.nodes if n.name == "node-b"]
    assert [g.name for g in node_b.gpus] == ["gpu-0"] and not node_b.gpus[0].published
    # a child's rectangle lies inside its parent's
    p = parent.find(f"{SVG}rect")
    for child in parent.findall(f"{SVG}g"):
        c = child.find(f"{SVG}rect")
        assert float(p.get("x")) <= float(c.get("x")) and float(c.get("x")) + float(c.get("width")) <= \
            float(p.get("x")) + float(p.get("width"))
        assert float(p.get("y")) <= float(c.get("y")) and float(c.get("y")) + float(c.get("height")) <= \
            float(p.get("y")) + float(p.get("height"))


def test_hover_titles_name_the_claim_and_the_pod(small):
    title = _title(_groups(small.svg)[key("node-a", "gpu-1")])
    assert title.splitlines()[0] == "node-a / gpu-1 (allocated)"
    assert "claim: ml/train" in title and "pod: trainer" in title and "uuid: GPU-a1" in title
    assert "claim" not in _title(_groups(small.svg)[key("node-a", "gpu-0")])


def test_nodes_their_pools_and_a_legend(small):
    assert [(n.name, n.pool) for n in small.nodes] == [("node-a", "h100-pool"), ("node-b", "a3-highgpu-1g")]
    root = ET.fromstring(small.svg)
    legends = [g.get("class") for g in root.iter(f"{SVG}g") if "drawb-map-legend" in (g.get("class") or "")]
    assert [c.split()[-1] for c in legends] == ["drawb-map-legend-free", "drawb-map-legend-allocated",
                                                 "drawb-map-legend-tainted", "drawb-map-legend-erroring"]
    assert [g.get("data-node") for g in root.iter(f"{SVG}g") if g.get("data-node")] == ["node-a", "node-b"]


def test_a_selector_colours_matches_errors_and_the_rest(small):
    devices = fixtures.devices()
    result = select(devices, ONE_G)
    cluster_map = build_map(devices, nodes=fixtures.NODES, matched=result.matched, failed=result.failed,
                            errors=result.error)
    # whole GPUs have no profile attribute: the scheduler's evaluation errors there
    for name in ("gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-10"):
        assert cluster_map.state_of(key("node-a", name)) == "erroring"
    assert cluster_map.state_of(key("node-a", "gpu-3-mig-1g10gb-0")) == "free"
    assert cluster_map.state_of(key("node-b", "gpu-0-mig-1g10gb-1")) == "allocated"
    assert cluster_map.state_of(key("node-a", "gpu-3-mig-3g40gb-4")) == "not selected"
    assert cluster_map.counts == {"free": 2, "allocated": 1, "tainted": 0, "erroring": 5, "not selected": 2}
    title = _title(_groups(cluster_map.svg)[key("node-a", "gpu-0")])
    assert "error: " in title and "no such key" in title


def test_the_map_command_on_the_simulated_cluster_uses_the_class_and_selector(shell):
    view = shell.run("%dra map --class mig.nvidia.com")
    assert view.map.counts == {"free": 13, "allocated": 1, "tainted": 0, "erroring": 0, "not selected": 32}
    view.selector = ONE_G
    assert view.map.counts["free"] == 9 and view.map.counts["not selected"] == 37
    assert view.canvas.svg == view.map.svg and "simulated cluster" in view.map.svg


def test_the_summary_of_ten_thousand_nodes_counts_per_pool_and_product():
    session = Session()
    session.connect(scenario="synthetic:10000x1")
    cluster_map = build_map(session.devices(), nodes=session.cluster.list("Node"))
    assert cluster_map.nodes is None
    rows = {(s.pool, s.product): (s.nodes, s.devices, s.counts["free"]) for s in cluster_map.summary}
    assert rows[("NVIDIA-H200", "NVIDIA H200")] == (2500, 2500, 2500)
    assert rows[("NVIDIA-L4", "compute-domain.nvidia.com")] == (2500, 5000, 5000)
    assert len(rows) == 8 and sum(v[1] for v in rows.values()) == 30000
    root = ET.fromstring(cluster_map.svg)
    pools = [g for g in root.iter(f"{SVG}g") if g.get("class") == "drawb-map-pool"]
    assert len(pools) == 8
    assert "summarised per node pool and product" in cluster_map.svg
    with pytest.raises(MapError, match="10000 nodes are too many to draw one by one"):
        build_map(session.devices(), detail=True)


def test_drawb_map_out_writes_svg_and_png(tmp_path, capsys):
    assert main(["map", "--out", str(tmp_path / "map.svg")]) == 0
    svg = (tmp_path / "map.svg").read_text()
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"') and ET.fromstring(svg) is not None
    assert "wrote " in capsys.readouterr().out
    assert main(["map", "--selector", ONE_G, "--out", str(tmp_path / "map.png")]) == 0
    assert (tmp_path / "map.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_drawb_map_bad_inputs_are_named_errors(tmp_path, capsys):
    assert main(["map", "--out", str(tmp_path / "map.txt")]) == 2
    assert "MapError: --out" in capsys.readouterr().err
    assert main(["map", "--out", str(tmp_path / "nope" / "map.svg")]) == 2
    assert "OutputPathError" in capsys.readouterr().err
    assert main(["map", "--selector", "device.driver =="]) == 2
    err = capsys.readouterr().err
    assert err.startswith("CELCompileError") or "CELCompileError" in err
    assert main(["map", "--class", "nope"]) == 2
    assert main(["browse"]) == 2  # the browser is a widget: the notebook's alone
    assert "unknown subcommand 'browse'" in capsys.readouterr().err


def test_drawb_map_prints_a_summary_per_node(capsys):
    assert main(["map"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Cluster map: 4 nodes, 46 devices")
    assert "  hgx-h200-03 (p5e.48xlarge): 9 free, 1 allocated" in out
