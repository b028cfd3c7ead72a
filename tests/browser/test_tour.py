"""The tour in JupyterLab: run every cell, see the device table, and use the selector builder by typing."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ARTIFACTS

pytestmark = pytest.mark.browser

WAIT_MS = 180_000  # generous: two shared cores start a kernel and load drawb while Lab renders
GPUS = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"


def run_all_cells(page: Page, url: str) -> None:
    """Open the tour, wait for its kernel, and run every cell from the Run menu."""
    page.goto(f"{url}/lab/tree/tour.ipynb")
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=WAIT_MS)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").click()
    page.get_by_text("Run All Cells", exact=True).click()


def test_tour_runs_and_the_builder_answers_as_you_type(lab, page):
    run_all_cells(page, lab)
    table = page.locator(".jp-CodeCell").filter(has_text="%dra devices --driver gpu.nvidia.com")
    expect(table.locator(".jp-OutputArea-output table tbody tr")).to_have_count(38, timeout=WAIT_MS)
    expect(table.locator(".jp-OutputArea-output table")).to_contain_text("gpu-4-mig-1g10gb-19-0")

    builder = page.locator(".drawb-selector-builder")
    status = builder.locator(".drawb-builder-status")
    # the tour's last builder cell set the expression from code: 9 MIG 1g.10gb devices, 32 without a profile
    expect(status).to_contain_text("9 of 46 devices match; 32 devices error", timeout=WAIT_MS)
    expect(builder.locator(".drawb-builder-errors")).to_contain_text("no such key: profile")
    builder.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "tour-builder.png"))

    selector = builder.locator("input[type=text]")
    selector.fill("")
    selector.press_sequentially(GPUS, delay=10)
    expect(status).to_have_text("24 of 46 devices match.", timeout=WAIT_MS)
    expect(builder.locator(".drawb-builder-matches tbody tr")).to_have_count(24)
    builder.screenshot(path=str(ARTIFACTS / "builder-gpus.png"))

    builder.locator("select").first.select_option("mig.nvidia.com")  # the class menu
    expect(status).to_have_text("0 of 46 devices match (DeviceClass mig.nvidia.com first).", timeout=WAIT_MS)

    selector.fill("device.driver ==")
    compile_error = builder.locator(".drawb-builder-compile-error pre")
    expect(compile_error).to_contain_text("ERROR: <input>:1:17: Syntax error", timeout=WAIT_MS)
    expect(compile_error).to_contain_text(" | device.driver ==\n | " + "." * 16 + "^")
    expect(status).to_contain_text("CELCompileError")
    expect(builder.locator(".drawb-builder-matches")).to_have_count(0)
    builder.screenshot(path=str(ARTIFACTS / "builder-compile-error.png"))
