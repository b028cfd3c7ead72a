"""The behaviours upgrade-check reads from drawb.versions, against the Go source of each release: where a minor
refuses a slice holding counter sets and devices, authorizes claim status writes by subresource, and where its
allocator compares list attributes as sets and sorts pools and slices (``k8s.io/dynamic-resource-allocation``,
the staging module of the same release, fetched from the Go module proxy when missing)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from drawb.testing.build import go_env
from tests.unit.versions.go_feature_gates import release

__all__ = ["release"]  # the fixture, one per known minor


def _staging(module: str, kubernetes_release: str) -> Path:
    """The unpacked staging module (``k8s.io/<module>@v0.<minor>.<patch>``) of a Kubernetes release."""
    version = "v0." + kubernetes_release.removeprefix("v1.")
    out = subprocess.run(["go", "mod", "download", "-json", f"k8s.io/{module}@{version}"], capture_output=True,
                         text=True, env=go_env(), cwd="/", timeout=600)
    info = json.loads(out.stdout or "{}")
    assert out.returncode == 0 and info.get("Dir"), f"go mod download k8s.io/{module}@{version}: {out.stderr}{info}"
    return Path(info["Dir"])


def _mentions(files: list[Path], text: str) -> bool:
    return any(text in f.read_text() for f in files if not f.name.endswith("_test.go"))


def test_slices_hold_counter_sets_or_devices_from_the_minor_drawb_says(release):
    rules, source = release
    validation = source / "pkg/apis/resource/validation/validation.go"
    assert _mentions([validation], "only one of `sharedCounters` or `devices` is allowed") == rules.has(
        "api.counter_sets_in_own_slices")


def test_claim_status_writes_are_authorized_by_subresource_where_the_gate_exists(release):
    rules, source = release
    utils = source / "pkg/registry/resource/utils.go"
    granular = "DRAResourceClaimGranularStatusAuthorization" in rules.gates
    assert _mentions([utils], 'resource="resourceclaims/binding"') == granular
    assert _mentions([utils], 'resource="resourceclaims/driver"') == granular
    policy = source / "plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go"
    assert _mentions([policy], 'Resources("resourceclaims/binding")') == granular  # the scheduler's own role


def test_the_allocator_compares_lists_as_sets_and_sorts_pools_from_the_minors_drawb_says(release):
    rules, _ = release
    allocators = sorted((_staging("dynamic-resource-allocation", rules.release) / "structured/internal").glob("*/*.go"))
    assert _mentions(allocators, "deviceAttributeListAsSet struct") == rules.has("alloc.list_attribute_constraints")
    assert _mentions(allocators, "sortPoolsByID(") == rules.has("alloc.deterministic_order")
