"""drawb.versions against the Go source of each release it names: the versioned feature gates of
``k8s.io/kubernetes`` and the API server's default ``resource.k8s.io`` versions, minor by minor.

The sources come from the Go module proxy (``go mod download``), the same modules the local control
plane is built from; nothing is skipped when they are absent: they are fetched.
"""

from __future__ import annotations

import re

from drawb import versions
from tests.unit.versions.go_feature_gates import dependencies_in, gates_in, is_dra_gate, release, resource_versions

__all__ = ["release"]  # the fixture, one per known minor


def test_every_dra_gate_has_the_release_stage_default_and_lock(release):
    rules, source = release
    expected = gates_in(source / "pkg/features/kube_features.go", rules.number, is_dra_gate)
    ours = {name: (g.stage, g.default, g.locked) for name, g in rules.gates.items()}
    theirs = {name: (g.stage, g.default, g.locked) for name, g in expected.items()}
    assert ours == theirs


def test_every_dra_gate_depends_on_the_gates_the_release_says(release):
    rules, source = release
    theirs = dependencies_in(source / "pkg/features/kube_features.go")
    every = {**rules.gates, **rules.dependency_gates}
    assert {name: set(g.needs) for name, g in every.items()} == {name: theirs.get(name, set()) for name in every}


def test_the_gates_outside_dra_that_dra_gates_depend_on_have_the_release_stage_default_and_lock(release):
    rules, source = release
    needed = {dep for g in rules.gates.values() for dep in g.needs if not is_dra_gate(dep)}
    expected = gates_in(source / "pkg/features/kube_features.go", rules.number, lambda name: name in needed)
    assert set(expected) == needed  # every one of them exists in the release
    ours = {name: (g.stage, g.default, g.locked) for name, g in rules.dependency_gates.items()}
    assert ours == {name: (g.stage, g.default, g.locked) for name, g in expected.items()}


def test_served_and_available_group_versions_are_the_release_defaults(release):
    rules, source = release
    lists = resource_versions(source / "pkg/controlplane/instance.go")
    assert list(rules.served) == lists["served"]
    assert sorted(rules.available) == sorted(lists["served"] + lists["beta"] + lists["alpha"])


def test_the_release_is_the_minor_it_stands_for(release):
    rules, _ = release
    assert versions.parse(rules.release).minor_text == rules.minor


def test_the_group_versions_that_have_each_newer_kind_are_the_releases(release):
    rules, source = release
    text = (source / "pkg/registry/resource/rest/storage_resource.go").read_text()
    for kind, plural in (("DeviceTaintRule", "devicetaintrules"), ("ResourcePoolStatusRequest", "resourcepoolstatusrequests")):
        found = re.findall(rf'resource := "{plural}"; apiResourceConfigSource\.ResourceEnabled\(resource(v\w+)\.', text)
        assert sorted(rules.kind_versions(kind)) == sorted(found), kind
        assert (rules.kind_gate(kind) is None) == (not found)
        if found:
            assert rules.kind_gate(kind) in rules.gates
