"""The device browser and the cluster map in JupyterLab: filter the browser by MIG profile with its menu and see
the row count; hover a device on the map and see its claim; click it and see its attributes. Screenshots go to
artifacts/browser/ (browse.png, map-hover.png; docs/guide/browse-and-map.md shows copies kept in docs/)."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS

pytestmark = pytest.mark.browser

WAIT_MS = 180_000
CELLS = ["%load_ext drawb", "browser = %dra browse\nbrowser", "view = %dra map\nview"]


def _notebook() -> dict:
    cells = [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in CELLS]
    return {"nbformat": 4, "nbformat_minor": 5, "cells": cells,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}}}


def _put(page, url: str, name: str, content: dict) -> None:
    """Save a notebook through the server's contents API, as Lab does (with its XSRF cookie)."""
    page.goto(f"{url}/lab")
    xsrf = next(c["value"] for c in page.context.cookies() if c["name"] == "_xsrf")
    response = page.request.put(f"{url}/api/contents/{name}", data=json.dumps(
        {"type": "notebook", "format": "json", "content": content}),
        headers={"Content-Type": "application/json", "X-XSRFToken": xsrf})
    assert response.ok, response.text()


def test_browse_and_map_by_pointing_and_typing(lab, page):
    _put(page, lab, "browse_map.ipynb", _notebook())
    page.goto(f"{lab}/lab/tree/browse_map.ipynb")
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=WAIT_MS)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").click()
    page.get_by_text("Run All Cells", exact=True).click()

    status = page.locator(".drawb-browse-status")
    expect(status).to_contain_text("rows 1-25 of 46", timeout=WAIT_MS)
    grid = page.locator(".drawb-browse-grid")
    expect(grid.locator("tbody tr")).to_have_count(25, timeout=WAIT_MS)
    page.locator(".drawb-browse-facet-profile select").select_option(label="1g.10gb (9)")
    expect(status).to_contain_text("rows 1-9 of 9", timeout=60_000)
    expect(grid.locator("tbody tr")).to_have_count(9, timeout=60_000)
    expect(grid).to_contain_text("gpu-4-mig-1g10gb-19-0")
    page.locator(".drawb-browse").screenshot(path=str(ARTIFACTS / "browse.png"))

    device = page.locator(".drawb-map [data-key='gpu.nvidia.com/hgx-h200-03/gpu-0'] > rect")
    device.hover()
    tooltip = page.locator(".drawb-map-tooltip")
    expect(tooltip).to_be_visible(timeout=30_000)
    expect(tooltip).to_contain_text("claim: gpu-demo/trainer-gpu-x7k2p")
    expect(tooltip).to_contain_text("pod: trainer")
    page.locator(".drawb-map-view").screenshot(path=str(ARTIFACTS / "map-hover.png"))
    device.click()
    detail = page.locator(".drawb-map-detail")
    expect(detail).to_contain_text("allocated to claim gpu-demo/trainer-gpu-x7k2p", timeout=60_000)
    expect(detail).to_contain_text("NVIDIA H200")
