"""The device browser widget, driven through its traits and controls in a real IPython shell, and live on the
simulated cluster's lifecycle."""

from __future__ import annotations

import pytest
from traitlets import TraitError

from drawb.notebook.browser import DeviceBrowser
from drawb.session import Session


@pytest.fixture
def browser(shell):
    widget = shell.run("%dra browse")
    assert isinstance(widget, DeviceBrowser)
    yield widget
    widget.close()


def _grid_rows(browser: DeviceBrowser) -> list[list[str]]:
    return browser._grid.df[["node", "device", "profile"]].values.tolist()


def test_first_page_and_counts(browser):
    assert (browser.total, browser.row_count, browser.page, browser.page_count) == (46, 46, 0, 2)
    assert len(browser.rows) == 25 and len(browser._grid.df) == 25
    assert browser.rows[["node", "device"]].iloc[0].tolist() == ["a100-sxm-node-01", "channel-0"]
    assert browser._status.value.startswith("rows 1-25 of 46")


def test_filter_by_profile_shows_only_those_rows(browser):
    assert browser.filter(profile="1g.10gb") is browser
    assert browser.row_count == 9 and browser.page_count == 1
    assert {row[2] for row in _grid_rows(browser)} == {"1g.10gb"}
    assert browser._facets["profile"].value == "1g.10gb"
    assert "(filtered from 46 devices)" in browser._status.value
    browser.filter(profile=None)
    assert browser.row_count == 46 and browser._facets["profile"].value == ""


def test_the_facet_menus_list_values_with_counts_and_drive_the_filters(browser):
    menu = browser._facets["profile"]
    assert ("1g.10gb (9)", "1g.10gb") in menu.options and ("(none) (32)", "(none)") in menu.options
    menu.value = "3g.40gb"  # as a user picks it
    assert browser.filters == {"profile": ["3g.40gb"]} and browser.row_count == 3
    browser._facets["state"].value = "allocated"
    assert browser.row_count == 1 and browser.rows["claim"].tolist() == ["gpu-demo/notebook-mig"]
    browser._facets["node"].value = "dgx-h1"  # a combobox while typing: not a node yet, nothing changes
    assert "node" not in browser.filters
    browser._facets["node"].value = "hgx-h200-03"
    assert browser.row_count == 0 and browser._status.value.startswith("no rows")
    browser._clear.click()
    assert browser.filters == {} and browser.row_count == 46


def test_search_sort_and_their_controls(browser):
    browser._search.value = "H200"
    assert browser.query == "H200" and browser.row_count == 10
    browser.sort("device", descending=True)
    assert browser._sort.value == "device" and browser._descending.value is True
    assert browser.rows["device"].tolist()[:3] == ["gpu-7", "gpu-6", "gpu-5"]
    browser._sort.value = "memory"
    browser._descending.value = False
    assert browser.sort_by == "memory" and browser.rows["memory"].iloc[0] == "143771Mi"
    browser.search("")
    assert browser.row_count == 46


def test_paging_with_buttons_and_the_trait(browser):
    browser._next.click()
    assert browser.page == 1 and len(browser.rows) == 21 and browser._next.disabled
    assert browser._status.value.startswith("rows 26-46 of 46")
    browser.next_page()
    assert browser.page == 1
    browser.page = 7  # beyond the last page: the last
    assert browser.page == 1
    browser._prev.click()
    assert browser.page == 0 and browser._prev.disabled
    browser.page = 1
    browser.filter(type="gpu")  # a new query starts at the first page
    assert browser.page == 0 and browser.row_count == 24
    browser.page_size = 5
    assert browser.page_count == 5 and len(browser.rows) == 5


def test_selecting_a_row_shows_the_device_its_claim_and_pod(browser):
    browser.filter(state="allocated").sort("node")
    browser._grid.selected_rows = [1]  # as a click in the grid
    assert browser.selected == "gpu.nvidia.com/hgx-h200-03/gpu-0"
    detail = browser._detail.value
    assert "allocated to claim <b>gpu-demo/trainer-gpu-x7k2p</b>" in detail
    assert "gpu.nvidia.com/productName" in detail and "NVIDIA H200" in detail and "trainer" in detail
    browser.select(None)
    assert browser.selected is None and browser._detail.value == ""


def test_bad_filters_and_sorts_are_refused_with_the_known_values(browser, shell):
    with pytest.raises(TraitError, match=r"no device has profile '1g.18gb'; values: \(none\), 1g.10gb"):
        browser.filter(profile="1g.18gb")
    with pytest.raises(TraitError, match="no facet 'colour'"):
        browser.filter(colour="red")
    with pytest.raises(TraitError, match="cannot sort by 'size'"):
        browser.sort("size")
    assert browser.row_count == 46 and browser.filters == {}
    err = shell.fails("%dra browse --profile 1g.18gb")
    assert err.splitlines()[0] == ("UsageError: The 'filters' trait of a DeviceBrowser instance expected "
                                   "no device has profile '1g.18gb'; values: (none), 1g.10gb, 2g.20gb, 3g.40gb, 7g.80gb") \
        or "no device has profile '1g.18gb'" in err.splitlines()[0]
    assert "Hint:" in err
    assert shell.fails("%dra browse --page-size 0").startswith("UsageError: --page-size 0: must be at least 1")


def test_start_options_of_the_magic(shell):
    browser = shell.run("%dra browse --profile 1g.10gb --sort device --page-size 4 --no-live")
    try:
        assert browser.row_count == 9 and browser.page_count == 3 and browser.sort_by == "device"
        assert browser._watches == []
    finally:
        browser.close()


def test_css_classes_for_browser_tests(browser):
    assert "drawb-browse" in browser._dom_classes
    for facet in ("node", "product", "type", "profile", "state", "claim"):
        assert f"drawb-browse-facet-{facet}" in browser._facets[facet]._dom_classes
    for name in ("search", "sort", "descending", "clear", "refresh", "prev", "next", "status", "grid", "detail"):
        assert f"drawb-browse-{name}" in getattr(browser, f"_{name}")._dom_classes, name


TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-l4", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.nvidia.com",
                "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'"}}],
            }}]}}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "l4-pod", "namespace": "default"},
       "spec": {"restartPolicy": "Never", "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-l4"}],
                "containers": [{"name": "ctr", "image": "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04",
                                "command": ["sleep", "3600"], "resources": {"claims": [{"name": "gpu"}]}}]}}


def test_live_updates_from_the_simulated_lifecycle_are_throttled():
    session = Session()
    session.connect(scenario="default")
    browser = DeviceBrowser(session, throttle_s=60)  # the timer will not fire during the test: flush() does its work
    try:
        browser.filter(product="NVIDIA L4")
        assert browser.row_count == 4 and set(browser.rows["state"]) == {"free"}
        session.cluster.apply([TEMPLATE, POD])
        session.cluster.list("Pod")  # using the cluster lets its scheduler run
        assert browser.stale and browser.rows["state"].tolist().count("allocated") == 0  # not redrawn yet
        assert browser._timer is not None
        browser.flush()
        assert not browser.stale and browser.rows["state"].tolist().count("allocated") == 1
        [claim] = browser.rows.loc[browser.rows["state"] == "allocated", "claim"]
        assert claim.startswith("default/l4-pod-gpu-")
        assert browser.filters == {"product": ["NVIDIA L4"]}  # the query survives the redraw
        session.cluster.delete("Pod", "l4-pod", "default")
        session.cluster.list("ResourceClaim")
        browser.flush()
        assert browser.rows["state"].tolist().count("allocated") == 0
    finally:
        browser.close()
    assert browser._timer is None and browser._watches == []


def test_the_live_timer_redraws_by_itself():
    import time

    session = Session()
    session.connect(scenario="default")
    browser = DeviceBrowser(session, throttle_s=0.05)
    try:
        browser.filter(product="NVIDIA L4")
        session.cluster.apply([TEMPLATE, POD])
        session.cluster.list("Pod")
        deadline = time.monotonic() + 10
        while browser.stale and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not browser.stale and browser.rows["state"].tolist().count("allocated") == 1
    finally:
        browser.close()
