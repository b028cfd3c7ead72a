"""The device browser and the cluster map on the real control plane: the fake driver's ResourceSlices read
through the informers, a claim the real scheduler allocates showing up live, and gone again after."""

from __future__ import annotations

import pytest

from drawb.commands.map import cluster_map_of
from drawb.notebook.browser import DeviceBrowser
from drawb.session import Session
from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for

pytestmark = pytest.mark.live

NODE = "hgx-h200-03"


def _published(slices: list[dict]) -> dict[str, int]:
    """Devices per productName of the newest generation of each pool, read from the raw slices."""
    newest: dict[tuple[str, str], int] = {}
    for s in slices:
        pool = s["spec"]["pool"]
        key = (s["spec"]["driver"], pool["name"])
        newest[key] = max(newest.get(key, 0), pool["generation"])
    counts: dict[str, int] = {}
    for s in slices:
        pool = s["spec"]["pool"]
        if pool["generation"] != newest[(s["spec"]["driver"], pool["name"])]:
            continue
        for device in s["spec"].get("devices") or ():
            product = ((device.get("attributes") or {}).get("productName") or {}).get("string", "(none)")
            counts[product] = counts.get(product, 0) + 1
    return counts


def _allocated(api) -> set[str]:
    """driver/pool/device of every device the API server says is allocated."""
    claims = api.get("/apis/resource.k8s.io/v1/resourceclaims")["items"]
    return {f"{r['driver']}/{r['pool']}/{r['device']}" for c in claims
            for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", [])}


def test_browser_and_map_follow_the_real_cluster(control_plane, namespace):
    api = control_plane.api()
    session = Session()
    session.connect(kubeconfig=str(control_plane.kubeconfig))
    browser = DeviceBrowser(session, throttle_s=0.2)
    try:
        slices = api.get("/apis/resource.k8s.io/v1/resourceslices")["items"]
        published = _published(slices)
        assert browser.total == sum(published.values())
        assert {v: n for v, n in browser.table.facet_values("product")} == published
        assert browser.filter(node=NODE, type="gpu").row_count == 8

        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": "browse-h200", "namespace": namespace},
                 "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "browse-h200", "namespace": namespace},
               "spec": {"nodeSelector": {"kubernetes.io/hostname": NODE},
                        "resourceClaims": [{"name": "gpu", "resourceClaimName": "browse-h200"}],
                        "containers": [{"name": "ctr", "image": "ubuntu:22.04", "command": ["sleep", "9999"],
                                        "resources": {"claims": [{"name": "gpu"}]}}]}}
        api.create(claim)
        api.create(pod)
        allocation = wait_for(lambda: (api.get(path_for("ResourceClaim", "browse-h200", namespace)).get("status") or {})
                              .get("allocation"), what="the real scheduler allocating browse-h200", timeout=60)
        [result] = allocation["devices"]["results"]
        held = f"{namespace}/browse-h200"

        def shown() -> list:
            rows = browser.rows
            return rows.loc[rows["claim"] == held, "device"].tolist()

        assert wait_for(shown, what="the browser showing the allocation (informer -> throttled redraw)",
                        timeout=30) == [result["device"]]
        browser.filter(node=None, type=None).filter(claim=held)
        assert browser.row_count == 1 and browser.rows["pod"].tolist() in (["browse-h200"], [""])

        cluster_map = cluster_map_of(session)
        key = f"{result['driver']}/{result['pool']}/{result['device']}"
        assert cluster_map.state_of(key) == "allocated"
        assert {k for k, s in zip(cluster_map.keys, cluster_map.states) if s == "allocated"} == _allocated(api)
        title = cluster_map.device(key).title
        assert f"claim: {held}" in title and "cluster at" in cluster_map.svg
        h200 = cluster_map_of(session, "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'",
                              "gpu.nvidia.com")
        assert h200.counts["free"] + h200.counts["allocated"] == published["NVIDIA H200"]

        api.delete(path_for("Pod", "browse-h200", namespace))
        wait_for(lambda: api.get_or_none(path_for("Pod", "browse-h200", namespace)) is None, what="pod gone", timeout=60)
        api.delete(path_for("ResourceClaim", "browse-h200", namespace))
        # a filter value that vanished from the cluster is dropped: every device shows again, all free of it
        wait_for(lambda: held not in dict(browser.table.facet_values("claim")) and not browser.stale,
                 what="the claim gone from the browser", timeout=30)
        assert browser.filters == {} and browser.row_count == browser.total
    finally:
        browser.close()
        session.close()
