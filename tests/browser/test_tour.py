"""The tour in JupyterLab: run every cell once, then look at what it shows and use its widgets by clicking and typing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ARTIFACTS

pytestmark = pytest.mark.browser

WAIT_MS = 180_000  # generous: two shared cores start a kernel and load drawb while Lab renders
GPUS = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
LAST_OUTPUT = "(9, 32)"  # the tour's last code cell: MIG 1g.10gb matches and devices that error


def run_all_cells(page: Page, url: str) -> None:
    """Open the tour, wait for its kernel, run every cell from the Run menu, and wait for the last one."""
    page.goto(f"{url}/lab/tree/tour.ipynb")
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=WAIT_MS)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").click()
    page.get_by_text("Run All Cells", exact=True).click()
    last = page.locator(".jp-CodeCell").filter(has_text="builder.match_count, builder.error_count")
    expect(last.locator(".jp-OutputArea-output")).to_have_text(LAST_OUTPUT, timeout=WAIT_MS * 2)


@pytest.fixture(scope="module")
def tour(lab, browser, request) -> Iterator[Page]:
    """One page with the whole tour run (a failing test of this module leaves a screenshot named after it)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        run_all_cells(page, lab)
        yield page
    finally:
        context.close()


@pytest.fixture(autouse=True)
def photograph_failures(request):
    yield
    if getattr(request.node, "body_failed", False) and "tour" in request.fixturenames:
        request.getfixturevalue("tour").screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"),
                                                   full_page=True)


def test_every_cell_ran_without_an_error(tour):
    errors = tour.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    expect(errors).to_have_count(0)
    table = tour.locator(".jp-CodeCell").filter(has_text="%dra devices --driver gpu.nvidia.com")
    expect(table.locator(".jp-OutputArea-output table tbody tr")).to_have_count(38)
    expect(table.locator(".jp-OutputArea-output table")).to_contain_text("gpu-4-mig-1g10gb-19-0")
    claims = tour.locator(".jp-CodeCell").filter(has_text="%dra claims -n default")
    expect(claims.locator(".jp-OutputArea-output table")).to_contain_text("allocated,reserved")
    why = tour.locator(".jp-CodeCell").filter(has_text="%dra why llm-trainer")
    expect(why).to_contain_text("why pod default/llm-trainer: pending, first empty stage free")
    expect(why).to_contain_text("hgx-h200-03/gpu-0: allocated to claim gpu-demo/trainer-")
    capacity = tour.locator(".jp-CodeCell").filter(has_text="%dra capacity single-gpu")
    expect(capacity).to_contain_text("more copies of template/single-gpu fit now")


def test_the_check_runner_shows_stages_log_and_verdict_and_runs_again(tour):
    runner = tour.locator(".drawb-check-runner").first
    title = runner.locator(".drawb-check-title")
    expect(title).to_contain_text("%dra check single-gpu PASS")
    expect(title).to_contain_text("not a real cluster")
    stages = runner.locator(".drawb-check-stages")
    for stage in ("allocated", "reserved", "scheduled", "running", "exited", "verdict"):
        expect(stages).to_contain_text(stage)
    expect(runner.locator(".drawb-check-log pre")).to_contain_text("GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-")
    expect(runner.locator(".drawb-check-verdict")).to_contain_text("saw exactly the 1 device(s) allocated")
    runner.scroll_into_view_if_needed()
    runner.screenshot(path=str(ARTIFACTS / "check-runner.png"))

    first_stage = runner.locator(".drawb-check-stages tbody tr").first
    run_id = first_stage.inner_text().split("(run ")[1].rstrip(")")
    runner.get_by_role("button", name="Run again").click()
    expect(first_stage).not_to_contain_text(run_id, timeout=WAIT_MS)  # a new run, shown as it happens
    expect(title).to_contain_text("PASS", timeout=WAIT_MS)
    expect(runner.locator(".drawb-check-log pre")).to_contain_text("GPU 0: NVIDIA")


def test_two_containers_and_a_mig_device_in_their_runners(tour):
    shared = tour.locator(".drawb-check-runner").filter(has_text="%dra check shared-claim")
    expect(shared.locator(".drawb-check-title")).to_contain_text("PASS")
    expect(shared.locator(".drawb-check-log pre")).to_contain_text("first | GPU 0: NVIDIA")
    expect(shared.locator(".drawb-check-log pre")).to_contain_text("second | GPU 0: NVIDIA")
    mig = tour.locator(".drawb-check-runner").filter(has_text="%dra check mig-profile")
    expect(mig.locator(".drawb-check-log pre")).to_contain_text("MIG 3g.40gb")


def test_the_builder_answers_as_you_type(tour):
    builder = tour.locator(".drawb-selector-builder")
    status = builder.locator(".drawb-builder-status")
    # the tour's last builder cell set the expression from code: 9 MIG 1g.10gb devices, 32 without a profile
    expect(status).to_contain_text("9 of 46 devices match; 32 devices error", timeout=WAIT_MS)
    expect(builder.locator(".drawb-builder-errors")).to_contain_text("no such key: profile")
    builder.scroll_into_view_if_needed()
    tour.screenshot(path=str(ARTIFACTS / "tour-builder.png"))

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


def test_the_claim_builder_builds_a_two_gpu_claim_by_clicking_and_typing(tour, tmp_path):
    claim = tour.locator(".drawb-build")
    claim.scroll_into_view_if_needed()
    status = claim.locator(".drawb-build-status")
    yaml = claim.locator(".drawb-build-yaml")
    allocation = claim.locator(".drawb-build-allocation")
    expect(status).to_contain_text("24 of 46 devices match", timeout=WAIT_MS)
    expect(yaml).not_to_contain_text("count: 2")

    claim.locator(".drawb-build-add-condition").click()
    value = claim.locator(".drawb-build-condition .drawb-build-condition-value select")
    value.select_option("NVIDIA A100-SXM4-40GB")
    expect(status).to_contain_text("8 of 46 devices match", timeout=WAIT_MS)
    expect(claim.locator(".drawb-build-selector")).to_contain_text(
        'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-40GB"')
    count = claim.locator(".drawb-build-count input")
    count.fill("2")
    count.press("Enter")
    claim.locator(".drawb-build-add-constraint").click()
    claim.locator(".drawb-build-constraint .drawb-build-constraint-attribute select").select_option(
        "resource.kubernetes.io/pcieRoot")

    expect(yaml).to_contain_text("- matchAttribute: resource.kubernetes.io/pcieRoot", timeout=WAIT_MS)
    expect(yaml).to_contain_text("count: 2")
    expect(yaml).to_contain_text('productName == "NVIDIA A100-SXM4-40GB"')
    expect(allocation).to_contain_text("the simulated scheduler would place the pod on a100-sxm-node-01")
    expect(allocation.locator("tr")).to_have_count(3)  # the header and the two devices
    claim.locator(".drawb-build-count").scroll_into_view_if_needed()
    tour.screenshot(path=str(ARTIFACTS / "claim-builder.png"))

    target = tmp_path / "two-a100.yaml"
    path = claim.locator(".drawb-build-export-path input")
    path.fill(str(target))
    path.press("Enter")
    claim.locator(".drawb-build-export").click()
    expect(claim.locator(".drawb-build-result")).to_contain_text(str(target), timeout=WAIT_MS)
    assert target.read_text().strip() == yaml.locator("pre").inner_text().strip()


def test_the_device_browser_filters_by_mig_profile(tour):
    browse = tour.locator(".drawb-browse")
    status = browse.locator(".drawb-browse-status")
    expect(status).to_contain_text("of 46", timeout=WAIT_MS)
    browse.locator(".drawb-browse-facet-profile select").select_option(label="1g.10gb (9)")
    expect(status).to_contain_text("rows 1-9 of 9 (filtered from 46 devices)", timeout=WAIT_MS)
    expect(browse.locator(".drawb-browse-grid table tbody tr")).to_have_count(9)
    expect(browse.locator(".drawb-browse-grid table tbody")).to_contain_text("gpu-4-mig-1g10gb-19-0")
    browse.scroll_into_view_if_needed()
    tour.screenshot(path=str(ARTIFACTS / "device-browser.png"))


def test_hovering_a_device_on_the_map_shows_its_claim(tour):
    view = tour.locator(".drawb-map-view")
    expect(view.locator(".drawb-map-device")).not_to_have_count(0, timeout=WAIT_MS)
    device = view.locator('.drawb-map-device[data-key="gpu.nvidia.com/hgx-h200-03/gpu-0"]')
    device.scroll_into_view_if_needed()
    device.hover()
    tip = view.locator(".drawb-map-tooltip")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("gpu-demo/trainer")
    tour.screenshot(path=str(ARTIFACTS / "cluster-map.png"))
