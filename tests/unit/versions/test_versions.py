"""The versions model's contract: known minors, one parser, newer and older versions, gate values."""

from __future__ import annotations

import warnings

import pytest

from drawb import versions
from drawb.versions import (LockedFeatureGate, NewerKubernetesVersion, NotAKubernetesVersion, UnknownFeatureGate,
                            UnmetFeatureGateDependency, UnsupportedKubernetesVersion)


def test_known_minors_oldest_first():
    assert versions.known() == ["1.34", "1.35", "1.36", "1.37"]
    assert versions.newest() == "1.37"
    assert versions.DEFAULT == "1.34"


@pytest.mark.parametrize(("text", "minor", "patch", "suffix"), [
    ("v1.36.3", 36, 3, ""), ("1.36", 36, None, ""), ("v1.36.3-gke.1200", 36, 3, "-gke.1200"),
    ("v1.37.2+k3s1", 37, 2, "+k3s1"), (" 1.34.0 ", 34, 0, ""), ("v1.35.0-rc.1", 35, 0, "-rc.1"),
    ("v1.34.4-eks-a1b2c3", 34, 4, "-eks-a1b2c3"),
])
def test_one_parser_reads_every_shape_servers_report(text, minor, patch, suffix):
    parsed = versions.parse(text)
    assert (parsed.major, parsed.minor, parsed.patch, parsed.suffix) == (1, minor, patch, suffix)
    assert versions.rules(text).minor == f"1.{minor}"


@pytest.mark.parametrize("text", ["", "1", "latest", "v1.x", "1.36.3.4", "version 1.36", None])
def test_what_is_not_a_version_is_refused_by_name(text):
    with pytest.raises(NotAKubernetesVersion, match="is not a Kubernetes version"):
        versions.parse(text)


def test_a_newer_version_gets_the_newest_rules_with_a_named_warning():
    with pytest.warns(NewerKubernetesVersion, match=r"Kubernetes 1\.38 is newer than drawb knows \(1\.37\): "
                                                    r"checking with 1\.37 rules"):
        assert versions.rules("v1.38.0-beta.0").minor == "1.37"


def test_a_known_version_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        versions.rules("1.37")


@pytest.mark.parametrize("text", ["1.33", "v1.27.3", "2.0"])
def test_an_older_version_is_refused_by_name(text):
    with pytest.raises(UnsupportedKubernetesVersion, match="drawb models"):
        versions.rules(text)


def test_gate_values_apply_overrides_and_ignore_gates_outside_dra():
    rules = versions.rules("1.34")
    values = rules.gate_values({"DRAExtendedResource": True, "SomeOtherGate": True})
    assert values["DRAExtendedResource"] is True and "SomeOtherGate" not in values
    assert values["DRAPrioritizedList"] is True and values["DRADeviceTaints"] is False


def test_a_dra_gate_the_minor_lacks_is_named_with_the_gates_it_has():
    with pytest.raises(UnknownFeatureGate, match="feature gate 'DRAListTypeAttributes' does not exist in Kubernetes 1.35") as e:
        versions.rules("1.35").gate_values({"DRAListTypeAttributes": True})
    assert "DRADeviceTaintRules" in e.value.hint


def test_a_locked_gate_cannot_be_turned_against_its_default():
    with pytest.raises(LockedFeatureGate, match="locked to true in Kubernetes 1.37"):
        versions.rules("1.37").gate_values({"DRAExtendedResource": False})
    assert versions.rules("1.37").gate_values({"DRAExtendedResource": True})["DRAExtendedResource"]


def test_a_gate_turned_on_brings_what_it_depends_on_outside_dra_too():
    rules = versions.rules("1.37")
    assert rules.with_dependencies({"DRAWorkloadResourceClaims": True}) == {
        "DRAWorkloadResourceClaims": True, "GenericWorkload": True}
    # DRAPartitionableDevices is on by default; DRAResourcePoolStatus (alpha) is not
    assert rules.with_dependencies({"DRAPartitionableDevicesType": True}) == {
        "DRAPartitionableDevicesType": True, "DRAResourcePoolStatus": True}


def test_a_gate_turned_off_takes_the_gates_that_depend_on_it_along():
    assert versions.rules("1.36").with_dependencies({"DRAResourceClaimDeviceStatus": False}) == {
        "DRAResourceClaimDeviceStatus": False, "DRADeviceBindingConditions": False,
        "DRAResourceClaimGranularStatusAuthorization": False}
    assert versions.rules("1.37").with_dependencies({"DRAConsumableCapacity": False}) == {
        "DRAConsumableCapacity": False, "DRAFractionalCapacityRange": False}


def test_a_gate_whose_objects_need_an_api_off_by_default_names_it():
    rules = versions.rules("1.36")
    assert rules.apis_for(rules.with_dependencies({"DRAWorkloadResourceClaims": True})) == ("scheduling.k8s.io/v1alpha2",)
    assert rules.apis_for({"GenericWorkload": False}) == () and versions.rules("1.37").apis_for({"GenericWorkload": True}) == ()


def test_1_34_has_no_gate_dependencies():
    rules = versions.rules("1.34")
    assert not any(g.needs for g in rules.gates.values()) and not rules.dependency_gates
    assert rules.with_dependencies({"DRADeviceBindingConditions": True, "DRAResourceClaimDeviceStatus": False}) == {
        "DRADeviceBindingConditions": True, "DRAResourceClaimDeviceStatus": False}


def test_a_gate_set_on_with_what_it_needs_set_off_is_refused_by_name():
    with pytest.raises(UnmetFeatureGateDependency, match="DRAFractionalCapacityRange is set on, but depends on "
                                                         "DRAConsumableCapacity, which is set off") as e:
        versions.rules("1.37").with_dependencies({"DRAFractionalCapacityRange": True, "DRAConsumableCapacity": False})
    assert e.value.hint == "turn DRAConsumableCapacity on, or DRAFractionalCapacityRange off"


def test_behaviours_are_named_and_unknown_names_fail():
    assert not versions.rules("1.34").has("cel.lists_library") and versions.rules("1.35").has("cel.lists_library")
    with pytest.raises(KeyError, match="unknown behaviour"):
        versions.rules("1.36").has("no.such.behaviour")


@pytest.mark.parametrize(("minor", "impl"), [("1.34", "experimental"), ("1.35", "incubating"),
                                              ("1.36", "incubating"), ("1.37", "incubating")])
def test_default_gates_select_the_scheduler_allocator(minor, impl):
    rules = versions.rules(minor)
    assert rules.allocator(rules.gate_values()) == impl


def test_the_allocator_library_takes_a_locked_gate_either_way():
    values = versions.rules("1.36").gate_values({"DRAAdminAccess": False}, enforce_locks=False)
    assert values["DRAAdminAccess"] is False


def test_the_rules_minor_of_a_version_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [versions.rules_minor(v) for v in ("v1.36.3", "1.38", "v1.33.1")] == ["1.36", "1.37", "1.33"]


@pytest.mark.parametrize(("version", "patch", "per_request"), [
    ("v1.36.3", 3, False), ("v1.36.5", 5, True), ("v1.36.4-gke.1200", 4, False), ("1.36", 6, True),
    ("v1.34.4", 4, False), ("v1.34.12", 12, True), ("v1.35.8", 8, False), ("v1.35.9", 9, True),
    ("v1.37.0", 0, False), ("v1.37.1", 1, True), ("v1.36.9", 9, True),  # a later patch than drawb knows: the newest's
])  # fmt: skip
def test_a_full_version_gets_the_behaviours_of_its_patch_a_bare_minor_the_newest(version, patch, per_request):
    rules = versions.rules(version)
    assert (rules.patch, rules.has("alloc.claim_limit_per_request")) == (patch, per_request)
    assert rules.minor == version.lstrip("v")[:4] and rules.gates == versions.rules(rules.minor).gates


def test_a_newer_minor_gets_the_newest_patch_of_the_newest_minor():
    with pytest.warns(NewerKubernetesVersion):
        assert versions.rules("v1.38.0").version == versions.rules(versions.newest()).version


def test_the_fields_a_server_drops_follow_its_gates_and_the_minor():
    assert "constraints[].distinctAttribute" not in versions.rules("1.34").dropped_fields()  # 1.34 keeps it
    assert "constraints[].distinctAttribute" in versions.rules("1.35").dropped_fields()
    assert "constraints[].distinctAttribute" not in versions.rules("1.35").dropped_fields({"DRAConsumableCapacity": True})
    assert "requests' tolerations" in versions.rules("1.35").dropped_fields()
    assert not versions.rules("1.36").dropped_fields() & {"constraints[].distinctAttribute", "requests' tolerations"}
