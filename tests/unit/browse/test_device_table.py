"""The browser's table: facets, search, sort and paging over the device frame, checked against plain pandas."""

from __future__ import annotations

import numpy as np
import pytest

from drawb.inventory.browse import COLUMNS, NONE, DeviceTable, FacetError, Query
from drawb.inventory.view import summary_view
from drawb.session import Session
from tests.unit.browse import fixtures


@pytest.fixture(scope="module")
def default_devices():
    return Session().devices()


@pytest.fixture(scope="module")
def table(default_devices):
    return DeviceTable(default_devices)


def _keys(table: DeviceTable, rows: np.ndarray) -> list[tuple[str, str]]:
    frame = table.frame.iloc[rows]
    return list(zip(frame["node"].astype(str), frame["device"].astype(str)))


def test_facet_values_count_what_the_devices_command_shows(table, default_devices):
    view = summary_view(default_devices)
    expected = view["profile"].fillna(NONE).value_counts().to_dict()
    assert dict(table.facet_values("profile")) == expected
    assert dict(table.facet_values("product")) == view["product"].fillna(NONE).value_counts().to_dict()
    assert dict(table.facet_values("state")) == {"free": 44, "allocated": 2}
    assert [v for v, _ in table.facet_values("node")] == sorted(view["node"].unique())


def test_a_profile_filter_keeps_exactly_the_devices_of_that_profile(table, default_devices):
    view = summary_view(default_devices)
    rows = table.rows(Query(filters={"profile": ("1g.10gb",)}))
    expected = view[view["profile"] == "1g.10gb"]
    assert sorted(_keys(table, rows)) == sorted(zip(expected["node"], expected["device"]))
    assert len(rows) == 9


def test_filters_on_two_facets_and_two_values_combine_and_or(table):
    rows = table.rows(Query(filters={"profile": ("1g.10gb", "3g.40gb"), "state": ("allocated",)}))
    assert _keys(table, rows) == [("dgx-h100-02", "gpu-5-mig-3g40gb-9-4")]
    none = table.rows(Query(filters={"profile": (NONE,), "type": ("gpu",)}))
    assert len(none) == 8 + 4 + 4 + 8  # the whole GPUs of the A100, H100, L4 and H200 nodes


def test_claim_facet_and_free_devices(table):
    rows = table.rows(Query(filters={"claim": ("gpu-demo/trainer-gpu-x7k2p",)}))
    assert _keys(table, rows) == [("hgx-h200-03", "gpu-0")]
    free = table.rows(Query(filters={"claim": (NONE,)}))
    assert len(free) == 44 == len(table.rows(Query(filters={"state": ("free",)})))


def test_unknown_facets_and_values_are_named_with_the_known_ones(table):
    with pytest.raises(FacetError, match=r"no device has profile '1g.18gb'; values: \(none\), 1g.10gb, 2g.20gb"):
        table.rows(Query(filters={"profile": ("1g.18gb",)}))
    with pytest.raises(FacetError, match="no facet 'colour'; facets: node, product, type, profile, state, claim"):
        table.rows(Query(filters={"colour": ("red",)}))
    with pytest.raises(FacetError, match="cannot sort by 'size'"):
        table.rows(Query(sort="size"))


def test_search_is_a_case_insensitive_substring_of_the_shown_columns(table):
    page = table.page(table.rows(Query()), 0, len(table))
    for text in ("H200", "mig-1g10gb", "trainer", "gpu-demo/notebook", "GKE-DRA", "zzz"):
        rows = table.rows(Query(search=text))
        expected = [(r["node"], r["device"]) for _, r in page.iterrows()
                    if any(text.lower() in str(r[c]).lower()
                           for c in ("node", "device", "type", "product", "profile", "claim", "pod"))]
        assert _keys(table, rows) == expected, text


def test_search_and_filter_together(table):
    rows = table.rows(Query(filters={"type": ("gpu",)}, search="h100"))
    assert _keys(table, rows) == [("dgx-h100-02", f"gpu-{i}") for i in range(4)]


def test_default_order_is_node_then_device_naturally():
    table = DeviceTable(fixtures.devices())
    names = [d for n, d in _keys(table, table.rows(Query())) if n == "node-a"]
    assert names == ["gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-3-mig-1g10gb-0", "gpu-3-mig-3g40gb-4", "gpu-10"]


def test_sort_by_memory_compares_quantities_and_keeps_missing_last(table):
    for descending in (False, True):
        page = table.page(table.rows(Query(sort="memory", descending=descending)), 0, len(table))
        values = table.frame["memory_value"].to_numpy()[table.rows(Query(sort="memory", descending=descending))]
        present = values[~np.isnan(values)]
        assert list(present) == sorted(present, reverse=descending)
        assert np.isnan(values[len(present):]).all() and len(present) == 38
        assert page["memory"].iloc[0] == ("143771Mi" if descending else "9984Mi")


def test_sort_by_node_descending_and_by_claim(table):
    rows = table.rows(Query(sort="node", descending=True))
    nodes = list(table.frame["node"].astype(str).to_numpy()[rows])
    assert nodes == sorted(nodes, reverse=True)
    claims = table.page(table.rows(Query(sort="claim")), 0, 3)["claim"].tolist()
    assert claims == ["gpu-demo/notebook-mig", "gpu-demo/trainer-gpu-x7k2p", ""]


def test_pages_cover_the_rows_once_in_order(table):
    rows = table.rows(Query(sort="product"))
    pages = [table.page(rows, p, 10) for p in range(5)]
    assert [len(p) for p in pages] == [10, 10, 10, 10, 6]
    joined = [tuple(r) for p in pages for r in p[["node", "device"]].itertuples(index=False)]
    assert joined == _keys(table, rows)
    assert table.page(rows, 5, 10).empty
    assert list(pages[0].columns) == COLUMNS


def test_tainted_devices_and_pods(table):
    small = DeviceTable(fixtures.devices())
    assert dict(small.facet_values("state")) == {"free": 7, "allocated": 2, "tainted": 1}
    page = small.page(small.rows(Query(filters={"state": ("allocated",)})), 0, 10)
    assert page[["node", "device", "claim", "pod"]].values.tolist() == [
        ["node-a", "gpu-1", "ml/train", "trainer"], ["node-b", "gpu-0-mig-1g10gb-1", "ml/train", "trainer"]]


def test_large_synthetic_cluster_facets_and_natural_nodes():
    session = Session()
    session.connect(scenario="synthetic:120x12")
    table = DeviceTable(session.devices())
    assert len(table) == 120 * 14
    assert dict(table.facet_values("profile"))["1g.10gb"] == 30 * 7
    rows = table.rows(Query(filters={"node": ("gpu-node-00007",), "type": ("gpu",)}))
    assert [d for _, d in _keys(table, rows)] == [f"gpu-{i}" for i in range(12)]
