"""drawb.versions against the Go source of each release it names: the versioned feature gates of
``k8s.io/kubernetes`` and the API server's default ``resource.k8s.io`` versions, minor by minor.

The sources come from the Go module proxy (``go mod download``), the same modules the local control
plane is built from; nothing is skipped when they are absent: they are fetched.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from drawb import versions
from drawb.testing.build import go_env
from tests.unit.versions.go_feature_gates import gates_in, is_dra_gate, resource_versions


def _module_dir(release: str) -> Path:
    """The unpacked ``k8s.io/kubernetes@release`` module, downloaded when missing."""
    out = subprocess.run(["go", "mod", "download", "-json", f"k8s.io/kubernetes@{release}"], capture_output=True,
                         text=True, env=go_env(), cwd="/", timeout=600)
    info = json.loads(out.stdout or "{}")
    assert out.returncode == 0 and info.get("Dir"), f"go mod download k8s.io/kubernetes@{release}: {out.stderr}{info}"
    return Path(info["Dir"])


@pytest.fixture(scope="module", params=versions.known())
def minor_and_source(request):
    rules = versions.rules(request.param)
    return rules, _module_dir(rules.release)


def test_every_dra_gate_has_the_release_stage_default_and_lock(minor_and_source):
    rules, source = minor_and_source
    expected = gates_in(source / "pkg/features/kube_features.go", rules.number, is_dra_gate)
    ours = {name: (g.stage, g.default, g.locked) for name, g in rules.gates.items()}
    theirs = {name: (g.stage, g.default, g.locked) for name, g in expected.items()}
    assert ours == theirs


def test_served_and_available_group_versions_are_the_release_defaults(minor_and_source):
    rules, source = minor_and_source
    lists = resource_versions(source / "pkg/controlplane/instance.go")
    assert list(rules.served) == lists["served"]
    assert sorted(rules.available) == sorted(lists["served"] + lists["beta"] + lists["alpha"])


def test_the_release_is_the_minor_it_stands_for(minor_and_source):
    rules, _ = minor_and_source
    assert versions.parse(rules.release).minor_text == rules.minor
