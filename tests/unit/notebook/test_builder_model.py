"""The claim builder's model (drawb.build): the CEL of every condition kind, the manifests, and reading them back.

Each condition's CEL is compiled as the API server would and evaluated on the simulated cluster's
devices; the count is checked against the frame's own columns, computed here without CEL.
"""

from __future__ import annotations

import pytest

from drawb.api.quantity import Quantity
from drawb.api.semver import Semver
from drawb.build import (
    BuildError,
    Choice,
    ClaimSpec,
    Condition,
    Constraint,
    Request,
    Sharing,
    spec_from_claim_spec,
    spec_from_documents,
)
from drawb.cel import compile_selector, preview
from drawb.render import render, validate_documents
from drawb.session import Session

GPU_CLASS = "device.driver == 'gpu.nvidia.com'"


@pytest.fixture(scope="module")
def devices():
    return Session().devices()


def _gpus(devices):
    return devices[devices["driver"] == "gpu.nvidia.com"]


def _count(devices, condition: Condition) -> int:
    return preview(devices, f"{GPU_CLASS} && {condition.cel()}").match_count


@pytest.mark.parametrize(
    ("condition", "cel"),
    [
        (Condition("product", "NVIDIA H100 80GB HBM3"),
         'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"'),
        (Condition("memory", "40Gi"), 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'),
        (Condition("mig_profile", "1g.10gb"), 'device.attributes["gpu.nvidia.com"].profile == "1g.10gb"'),
        (Condition("compute_capability", "8.9"),
         'device.attributes["gpu.nvidia.com"].cudaComputeCapability.compareTo(semver("8.9.0")) >= 0'),
        (Condition("architecture", "Hopper"), 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'),
        (Condition("driver_version", "550.0.0", "more than"),
         'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))'),
        (Condition("driver_version", "580.95.5"),
         'device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("580.95.5")) >= 0'),
        (Condition("memory", "20Gi", "less than"),
         'device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("20Gi"))'),
        (Condition("product", "NVIDIA L4", "is not"), 'device.attributes["gpu.nvidia.com"].productName != "NVIDIA L4"'),
        (Condition("cel", " device.attributes['gpu.nvidia.com'].type == 'mig' "),
         "device.attributes['gpu.nvidia.com'].type == 'mig'"),
    ],
)
def test_each_condition_writes_the_cel_a_person_would_and_it_compiles(condition, cel):
    assert condition.cel() == cel
    compile_selector(cel, kubernetes_version="1.34", stored=False)


def test_string_conditions_match_what_the_frame_holds(devices):
    gpus = _gpus(devices)
    for kind, column in (("product", "productName"), ("mig_profile", "profile"), ("architecture", "architecture")):
        for value in gpus[f"gpu.nvidia.com/{column}"].dropna().unique():
            expected = int((gpus[f"gpu.nvidia.com/{column}"] == value).sum())
            assert _count(devices, Condition(kind, value)) == expected > 0, (kind, value)


def test_memory_at_least_counts_devices_with_that_much_memory(devices):
    gpus = _gpus(devices)
    memory = [Quantity.parse(m) for m in gpus["capacity:gpu.nvidia.com/memory"].dropna()]
    for limit in ("10Gi", "40Gi", "80Gi", "41000Mi"):
        expected = sum(1 for m in memory if m.compare_to(Quantity.parse(limit)) >= 0)
        assert _count(devices, Condition("memory", limit)) == expected > 0, limit


@pytest.mark.parametrize(("kind", "column"), [("compute_capability", "cudaComputeCapability"),
                                               ("driver_version", "driverVersion")])
def test_versions_at_least_and_more_than_count_as_semver_orders(devices, kind, column):
    values = [Semver.parse(v) for v in _gpus(devices)[f"gpu.nvidia.com/{column}"].dropna()]
    for floor in sorted({str(v) for v in values}):
        at_least = sum(1 for v in values if v.compare_to(Semver.parse(floor)) >= 0)
        more = sum(1 for v in values if v.compare_to(Semver.parse(floor)) > 0)
        assert _count(devices, Condition(kind, floor)) == at_least > 0
        assert _count(devices, Condition(kind, floor, "more than")) == more


@pytest.mark.parametrize(
    ("kind", "value", "op", "message"),
    [
        ("memory", "forty gigs", "", "is not a quantity"),
        ("driver_version", "550.x", "", "is not a version"),
        ("product", "", "", "has no value"),
        ("product", "NVIDIA L4", "at least", "no comparison"),
        ("colour", "red", "", "unknown condition kind"),
    ],
)
def test_bad_condition_values_are_named(kind, value, op, message):
    with pytest.raises(BuildError, match=message) as info:
        Condition(kind, value, op)
    assert info.value.name == "InvalidClaim"


def test_conditions_join_into_one_selector_with_raw_cel_in_parentheses():
    choice = Choice(conditions=[Condition("product", "NVIDIA H200"), Condition("cel", "a || b")])
    assert choice.selector == 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200" && (a || b)'
    assert Choice(conditions=[Condition("cel", "a || b")]).selector == "a || b"


def _full_spec() -> ClaimSpec:
    return ClaimSpec(
        template_name="two-h100", pod_name="two-h100-pod", containers=2,
        requests=[
            Request("gpus", [Choice("gpus", conditions=[Condition("product", "NVIDIA H100 80GB HBM3"),
                                                         Condition("memory", "40Gi")], count=2)]),
            Request("fallback", [Choice("h200", conditions=[Condition("product", "NVIDIA H200")]),
                                 Choice("any", all_devices=True)]),
            Request("mig", [Choice("mig", "mig.nvidia.com", [Condition("mig_profile", "1g.10gb")])]),
        ],
        constraints=[Constraint("matchAttribute", "gpu.nvidia.com/productName", ["gpus"]),
                     Constraint("distinctAttribute", "gpu.nvidia.com/uuid")],
        sharing=Sharing("TimeSlicing", interval="Long", requests=["gpus"]),
    )


def test_the_manifests_are_v1_and_pass_the_api_servers_validation():
    documents = _full_spec().documents("gpu-team")
    template, pod = documents
    requests = template["spec"]["spec"]["devices"]["requests"]
    assert requests[0] == {"name": "gpus", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "count": 2, "selectors": [{"cel": {"expression":
            'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3" && '
            'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'}}]}}
    assert [a["name"] for a in requests[1]["firstAvailable"]] == ["h200", "any"]
    assert requests[1]["firstAvailable"][1]["allocationMode"] == "All"
    config = template["spec"]["spec"]["devices"]["config"]
    assert config == [{"requests": ["gpus"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {
        "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
        "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}}}}}]
    assert [c["resources"]["claims"] for c in pod["spec"]["containers"]] == [[{"name": "gpus"}]] * 2
    assert pod["spec"]["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "two-h100"}]
    assert all(d["metadata"]["namespace"] == "gpu-team" for d in documents)
    errors = [i for i in validate_documents(documents, kubernetes_version="1.34") if i.level == "error"]
    assert errors == []


def test_mps_on_mig_devices_is_a_mig_device_config_without_an_interval():
    spec = ClaimSpec(requests=[Request("mig", [Choice("mig", "mig.nvidia.com")])],
                     sharing=Sharing("MPS", thread_percentage=25, pinned_memory_limit="4Gi"))
    (entry,) = spec.devices()["config"]
    assert entry["opaque"]["parameters"] == {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "MigDeviceConfig",
                                             "sharing": {"strategy": "MPS", "mpsConfig": {
                                                 "defaultActiveThreadPercentage": 25,
                                                 "defaultPinnedDeviceMemoryLimit": "4Gi"}}}
    assert validate_documents(spec.documents(), kubernetes_version="1.34")[0].level == "warning"  # driver's gate


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (ClaimSpec(requests=[Request("a"), Request("a")]), "two requests share a name"),
        (ClaimSpec(requests=[Request("a", [Choice(count=0)])]), "count 0 is below 1"),
        (ClaimSpec(requests=[Request("a", [Choice("x"), Choice("x")])]), "two alternatives share a name"),
        (ClaimSpec(sharing=Sharing("Spatial")), "not one of TimeSlicing, MPS"),
        (ClaimSpec(sharing=Sharing("MPS", thread_percentage=150)), "outside 0-100"),
        (ClaimSpec(requests=[Request("a", [Choice("x")]), Request("b", [Choice("y", "mig.nvidia.com")])],
                   sharing=Sharing()), "MIG devices and full GPUs together"),
    ],
)
def test_claims_that_cannot_be_written_say_why(spec, message):
    with pytest.raises(BuildError, match=message):
        spec.documents()


def test_what_the_builder_writes_reads_back_the_same():
    spec = _full_spec()
    assert spec_from_documents(spec.documents()) == spec


def _same_meaning(devices, value):
    """``value`` with each selector replaced by the devices it matches, and ``count: 1`` (the default) dropped."""
    if isinstance(value, dict):
        if "expression" in value:
            return tuple(preview(devices, value["expression"]).matched)
        return {k: _same_meaning(devices, v) for k, v in value.items() if not (k == "count" and v == 1)}
    if isinstance(value, list):
        return [_same_meaning(devices, v) for v in value]
    return value


@pytest.mark.parametrize("template", ["single-gpu", "gpu-by-memory", "mig-profile", "first-available",
                                      "multi-gpu-one-node", "time-slicing", "mps", "all-gpus"])
def test_bundled_templates_read_back_into_manifests_of_the_same_meaning(devices, template):
    rendered = render(template).documents
    spec = spec_from_documents(rendered)
    claim = next(d for d in rendered if d["kind"] == "ResourceClaimTemplate")
    written = spec.documents()[0]["spec"]
    assert _same_meaning(devices, written) == _same_meaning(devices, claim["spec"])
    assert spec.template_name == claim["metadata"]["name"]


def test_unknown_cel_and_fields_are_kept_verbatim():
    devices = {"requests": [{"name": "g", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "adminAccess": True,
        "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H')"}},
                      {"cel": {"expression": "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"}}]}}],
        "config": [{"opaque": {"driver": "other.example.com", "parameters": {"x": 1}}}]}
    spec = spec_from_claim_spec({"devices": devices})
    (choice,) = spec.requests[0].choices
    assert [c.kind for c in choice.conditions] == ["cel", "memory"]
    assert choice.extra == {"adminAccess": True}
    assert spec.extra_config == devices["config"] and spec.sharing is None


def test_the_beta_shape_is_refused_with_the_v1_hint():
    with pytest.raises(BuildError, match="beta shape") as info:
        spec_from_claim_spec({"devices": {"requests": [{"name": "g", "deviceClassName": "gpu.nvidia.com"}]}})
    assert "exactly" in info.value.hint
