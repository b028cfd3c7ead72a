"""The claim builder widget (``%dra build``) driven through its traits, controls and methods, in a real IPython
shell on the simulated cluster. Expected counts come from drawb.cel on the device frame, the predicted node
from drawb's preview of the same manifests, the manifests back from the files and the simulated API server."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest
import yaml

from drawb.build import BuildError
from drawb.cel import preview
from drawb.notebook.claimbuilder import ClaimBuilder
from drawb.notebook.claimrows import ConditionRow, ConstraintRow

H100 = "NVIDIA H100 80GB HBM3"
GPU = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"


@pytest.fixture
def builder(shell) -> ClaimBuilder:
    widget = shell.run("%dra build")
    assert isinstance(widget, ClaimBuilder)
    widget._later.delay = 0  # no kernel event loop here: update at once, as the programmatic methods do
    return widget


@pytest.fixture(scope="module")
def devices():
    from drawb.session import Session

    return Session().devices()


def _gpus_matching(devices, cel: str) -> int:
    return preview(devices, f"{GPU} && {cel}").match_count


def _rows(widget, cls):
    found = []

    def walk(w):
        if isinstance(w, cls):
            found.append(w)
        for child in getattr(w, "children", ()):
            walk(child)

    walk(widget)
    return found


def _by_class(widget, css: str):
    found = []

    def walk(w):
        if css in getattr(w, "_dom_classes", ()):
            found.append(w)
        for child in getattr(w, "children", ()):
            walk(child)

    walk(widget)
    return found


def test_starts_with_one_gpu_request_matching_every_gpu(builder, devices):
    assert builder.match_count == preview(devices, GPU).match_count > 0
    assert builder.valid and builder.predicted_node is not None
    assert "resourceClaimTemplateName: built-claim" in builder.yaml
    assert "every device of the class" in _by_class(builder, "drawb-build-selector")[0].value


@pytest.mark.parametrize(
    ("kind", "value", "op", "cel"),
    [
        ("product", H100, "", f'device.attributes["gpu.nvidia.com"].productName == "{H100}"'),
        ("memory", "80Gi", "", 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0'),
        ("compute_capability", "9.0", "", 'device.attributes["gpu.nvidia.com"].cudaComputeCapability.compareTo(semver("9.0.0")) >= 0'),
        ("architecture", "Ampere", "", 'device.attributes["gpu.nvidia.com"].architecture == "Ampere"'),
        ("driver_version", "575.0.0", "more than", 'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("575.0.0"))'),
        ("cel", "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H')", "",
         "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H')"),
    ],
)
def test_each_condition_kind_shows_its_cel_and_the_devices_it_matches(builder, devices, kind, value, op, cel):
    builder.add_condition(kind, value, op)
    choice = builder.outcome.choices[0]
    assert choice.selector == cel
    assert builder.match_count == _gpus_matching(devices, cel) > 0
    assert html.escape(cel) in _by_class(builder, "drawb-build-selector")[0].value
    assert f"<b>{builder.match_count}</b>" in _by_class(builder, "drawb-build-status")[0].value
    assert f"expression: {cel}" in builder.yaml or f"expression: '{cel}'" in builder.yaml


def test_mig_profile_on_the_mig_class(builder, devices):
    builder.set_device_class("mig.nvidia.com")
    builder.add_condition("mig_profile", "1g.10gb")
    mig = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
    expected = preview(devices, f'{mig} && device.attributes["gpu.nvidia.com"].profile == "1g.10gb"').match_count
    assert builder.match_count == expected > 0
    assert builder.predicted_node is not None


def test_dropdowns_offer_the_values_present(builder, devices):
    builder.add_condition("product")
    (row,) = _rows(builder, ConditionRow)
    present = sorted(devices["gpu.nvidia.com/productName"].dropna().unique())
    assert list(row.value.options) == present
    assert builder.spec.requests[0].choices[0].conditions[0].value == present[0]
    classes = _by_class(builder, "drawb-build-class")[0]
    assert "mig.nvidia.com" in classes.options and "gpu.nvidia.com" in classes.options


def test_typing_into_a_row_updates_the_model_and_a_bad_value_is_named_without_losing_it(builder, devices):
    builder.add_condition("memory", "40Gi")
    (row,) = _rows(builder, ConditionRow)
    row.value.value = "80"
    assert builder.spec.requests[0].choices[0].conditions[0].value == "80Gi"
    assert builder.match_count == _gpus_matching(devices, 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0')
    row.value.value = "eighty"
    assert not builder.valid and "is not a quantity" in row.problem.value
    assert row.value.value == "eighty"
    with pytest.raises(BuildError, match="not a quantity"):
        builder.export("unused.yaml")


def test_the_kind_dropdown_swaps_the_row(builder):
    builder.add_condition("product", H100)
    (row,) = _rows(builder, ConditionRow)
    row.kind.value = "architecture"
    (condition,) = builder.spec.requests[0].choices[0].conditions
    assert condition.kind == "architecture" and condition.value in ("Ada Lovelace", "Ampere", "Hopper")


def test_buttons_add_and_remove_rows(builder):
    _by_class(builder, "drawb-build-add-condition")[0].click()
    assert len(_rows(builder, ConditionRow)) == 1
    _by_class(builder, "drawb-build-remove-condition")[0].click()
    assert _rows(builder, ConditionRow) == [] and builder.spec.requests[0].choices[0].conditions == []
    _by_class(builder, "drawb-build-add-request")[0].click()
    assert [r.name for r in builder.spec.requests] == ["gpu", "gpu-1"]
    assert len(_by_class(builder, "drawb-build-request")) == 2
    _by_class(builder, "drawb-build-remove-request")[1].click()
    assert [r.name for r in builder.spec.requests] == ["gpu"]


def test_a_compile_error_shows_the_caret_and_blocks_the_allocation(builder):
    builder.add_condition("cel", "device.attributes['gpu.nvidia.com'].productName ==")
    error = builder.outcome.choices[0].compile_error
    assert error is not None and "^" in error
    assert "^" in _by_class(builder, "drawb-build-compile-error")[0].value
    assert not builder.valid and builder.predicted_node is None
    assert "fix the errors above first" in _by_class(builder, "drawb-build-allocation")[0].value


def test_erroring_devices_are_listed(builder, devices):
    cel = "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
    builder.set_device_class("gpu.nvidia.com")
    builder.add_condition("cel", cel)
    result = builder.outcome.choices[0].result
    assert result.error_count == preview(devices, f"{GPU} && {cel}").error_count > 0
    assert "no such key" in _by_class(builder, "drawb-build-errors")[0].value


def test_count_and_all(builder, devices):
    builder.add_condition("product", H100)
    builder.set_count(2)
    assert "count: 2" in builder.yaml
    assert len(builder.outcome.allocation.devices) == 2
    builder.set_count("All")
    assert "allocationMode: All" in builder.yaml and "count:" not in builder.yaml
    h100 = _gpus_matching(devices, f'device.attributes["gpu.nvidia.com"].productName == "{H100}"')
    assert len(builder.outcome.allocation.devices) == h100  # every H100 on the one H100 node
    with pytest.raises(BuildError, match="below 1"):
        builder.set_count(0)
    _by_class(builder, "drawb-build-all")[0].value = False
    assert builder.spec.requests[0].choices[0].all_devices is False


def test_too_many_devices_has_no_node_and_says_why(builder):
    builder.add_condition("product", H100)
    builder.set_count(16)
    assert builder.predicted_node is None
    assert "fits on none of the" in builder.outcome.allocation.reason


def test_first_available_falls_back_to_the_next_alternative(builder):
    builder.add_condition("product", H100)
    builder.set_count(16)  # no node has 16 H100s
    builder.add_alternative("any-gpu")
    assert "firstAvailable:" in builder.yaml
    assert builder.predicted_node is not None
    (result,) = builder.outcome.allocation.devices
    assert result["request"] == "gpu/any-gpu"
    builder.remove_alternative("any-gpu")
    assert "firstAvailable" not in builder.yaml
    with pytest.raises(BuildError, match="one alternative left"):
        builder.remove_alternative("gpu")


def test_match_attribute_keeps_two_gpus_of_one_product(builder, shell):
    builder.set_count(2)
    builder.add_constraint("matchAttribute", "gpu.nvidia.com/productName")
    assert "matchAttribute: gpu.nvidia.com/productName" in builder.yaml
    nodes = {d["pool"] for d in builder.outcome.allocation.devices}
    assert nodes == {builder.predicted_node}
    (row,) = _rows(builder, ConstraintRow)
    row.kind.value = "distinctAttribute"
    assert builder.spec.constraints[0].kind == "distinctAttribute"
    assert any("DRAConsumableCapacity" in str(i) for i in builder.outcome.issues)
    builder.remove_constraint(0)
    assert "constraints" not in builder.yaml


def test_sharing_time_slicing_and_mps(builder):
    builder.containers = 2
    builder.set_sharing("TimeSlicing", interval="Long")
    assert "strategy: TimeSlicing" in builder.yaml and "interval: Long" in builder.yaml
    assert builder.yaml.count("- name: gpus") == 3  # two containers and the pod's claim entry
    assert _by_class(builder, "drawb-build-sharing-strategy")[0].value == "TimeSlicing"
    _by_class(builder, "drawb-build-sharing-strategy")[0].value = "MPS"
    _by_class(builder, "drawb-build-sharing-threads")[0].value = 25
    _by_class(builder, "drawb-build-sharing-pinned")[0].value = "4Gi"
    assert builder.spec.sharing.strategy == "MPS"
    assert "defaultActiveThreadPercentage: 25" in builder.yaml and "defaultPinnedDeviceMemoryLimit: 4Gi" in builder.yaml
    with pytest.raises(BuildError, match="outside 0-100"):
        builder.set_sharing("MPS", thread_percentage=101)
    builder.set_sharing(None)
    assert "config" not in builder.yaml


def test_export_writes_the_yaml_it_shows(builder, tmp_path):
    builder.add_condition("product", H100)
    builder.template_name = "two-h100"
    path = builder.export(tmp_path / "claim.yaml")
    assert path.read_text() == builder.yaml
    assert [d["kind"] for d in yaml.safe_load_all(path.read_text())] == ["ResourceClaimTemplate", "Pod"]
    _by_class(builder, "drawb-build-export-path")[0].value = str(tmp_path / "missing" / "x.yaml")
    _by_class(builder, "drawb-build-export")[0].click()
    assert "does not exist" in _by_class(builder, "drawb-build-result")[0].value


def test_dry_run_then_apply_on_the_simulated_cluster_allocates_the_predicted_devices(builder):
    builder.add_condition("product", H100)
    builder.set_count(2)
    builder.containers = 2  # the containers keep running, so the claim stays allocated for a look
    builder.template_name, builder.pod_name = "built-h100", "built-h100-pod"
    predicted = builder.outcome.allocation
    cluster = builder._session.cluster
    dry = builder.dry_run()
    assert dry.status.startswith("dry run: 2 object(s), accepted by the simulated cluster")
    assert cluster.get("Pod", "built-h100-pod", "default") is None
    applied = builder.apply()
    assert applied.status.startswith("applied: 2 object(s)")
    assert "accepted by the simulated cluster" in _by_class(builder, "drawb-build-result")[0].value
    cluster.sleep(5)
    pod = cluster.get("Pod", "built-h100-pod", "default")
    assert pod["spec"].get("nodeName") == predicted.node
    (status,) = pod["status"]["resourceClaimStatuses"]
    claim = cluster.get("ResourceClaim", status["resourceClaimName"], "default")
    results = claim["status"]["allocation"]["devices"]["results"]
    assert sorted((r["pool"], r["device"]) for r in results) == sorted((d["pool"], d["device"]) for d in predicted.devices)
    cluster.delete("Pod", "built-h100-pod", "default")
    cluster.delete("ResourceClaimTemplate", "built-h100", "default")


def test_starting_points(shell):
    from drawb.build import Condition

    widget = shell.run("%dra build --from multi-gpu-one-node")
    assert widget.spec.template_name == "multi-gpu" and widget.spec.requests[0].choices[0].count == 2
    assert [c.kind for c in widget.spec.constraints][:1] == ["matchAttribute"]
    widget = shell.run("%dra build --from mig-profile")
    assert widget.spec.requests[0].choices[0].conditions == [Condition("mig_profile", "1g.10gb")]
    message = shell.fails("%dra build --from claim/nope")
    assert "no ResourceClaim 'nope'" in message
    message = shell.fails("%dra build --from pod/x")
    assert "expected claim/NAME, template/NAME" in message


def test_changing_a_value_keeps_the_controls_and_a_kind_change_rebuilds_them(builder, devices):
    builder.add_condition("product", H100)
    (row,) = _rows(builder, ConditionRow)
    builder.set_condition(0, "NVIDIA H200")
    assert _rows(builder, ConditionRow) == [row] and row.value.value == "NVIDIA H200"
    assert builder.match_count == _gpus_matching(devices, 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"')
    builder.set_condition(0, "Hopper", kind="architecture")
    (new_row,) = _rows(builder, ConditionRow)
    assert new_row is not row and new_row.kind.value == "architecture"


@pytest.mark.parametrize("selector", ["device.driver == 'gpu.nvidia.com'", "device.attributes['gpu.nvidia.com'].type == 'mig'",
                                      "true"])
def test_the_match_table_holds_what_summary_view_shows(devices, selector):
    from drawb.inventory.view import summary_view
    from drawb.notebook.selection_html import matches_html

    result = preview(devices, selector)
    cells = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", matches_html(result, limit=500))]
    view = summary_view(devices[result.matched]).reindex(columns=["node", "device", "type", "product", "memory", "profile"])
    expected = [[html.escape("" if v is None or v is pd.NA else str(v)) for v in row] for row in view.astype(object).itertuples(index=False)]
    assert cells == expected and len(cells) == result.match_count


def test_check_runs_the_built_pod_and_judges_its_gpus(builder):
    builder.add_condition("product", H100)
    verdict = builder.check(timeout=60)
    assert verdict.status == "PASS", verdict.reason
    assert verdict.node == "dgx-h100-02" == builder.predicted_node
    assert "PASS" in _by_class(builder, "drawb-build-result")[0].value


def test_typing_is_debounced_on_the_kernels_event_loop(builder):
    import asyncio

    from drawb.notebook.claimbuilder import Debouncer

    calls = []
    debounced = Debouncer(lambda: calls.append(1), 0.05)

    async def type_three_keys():
        for _ in range(3):
            debounced()
            await asyncio.sleep(0.01)
        assert calls == []  # still typing
        await asyncio.sleep(0.2)

    asyncio.run(type_three_keys())
    assert calls == [1]
    debounced()  # no event loop running: at once
    assert calls == [1, 1]
