"""Read facts from the Go source of each Kubernetes release drawb.versions names.

``release`` is a fixture, one per known minor: its rules and the unpacked ``k8s.io/kubernetes`` module of
the release they name, fetched from the Go module proxy when missing (nothing is skipped). In
``pkg/features/kube_features.go`` each gate maps to its versioned specs (the version from which a spec
holds, its default, its stage and whether it is locked); the spec that holds in minor ``m`` is the last
one whose version is at most ``m``.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from drawb import versions
from drawb.testing.build import go_env


def module_dir(release: str) -> Path:
    """The unpacked ``k8s.io/kubernetes@release`` module, downloaded when missing."""
    out = subprocess.run(["go", "mod", "download", "-json", f"k8s.io/kubernetes@{release}"], capture_output=True,
                         text=True, env=go_env(), cwd="/", timeout=600)
    info = json.loads(out.stdout or "{}")
    assert out.returncode == 0 and info.get("Dir"), f"go mod download k8s.io/kubernetes@{release}: {out.stderr}{info}"
    return Path(info["Dir"])


@pytest.fixture(scope="module", params=versions.known())
def release(request) -> tuple[versions.Rules, Path]:
    """One known minor's rules and the Go source of the release they name."""
    rules = versions.rules(request.param)
    return rules, module_dir(rules.release)

_ENTRY = re.compile(r"^\t(\w+): \{\n(.*?)^\t\},", re.MULTILINE | re.DOTALL)
_SPEC = re.compile(r"\{Version: version\.MustParse\(\"1\.(\d+)\"\),\s*Default: (true|false),"
                   r"\s*PreRelease: featuregate\.(\w+)(?:,\s*LockToDefault: (true|false))?")
_STAGES = {"Alpha": "alpha", "Beta": "beta", "GA": "ga", "Deprecated": "deprecated"}


@dataclass(frozen=True)
class GoGate:
    """One gate's spec as it holds in one minor."""

    stage: str
    default: bool
    locked: bool


def versioned_block(source: str) -> str:
    """The body of ``defaultVersionedKubernetesFeatureGates``."""
    start = source.index("defaultVersionedKubernetesFeatureGates = map[featuregate.Feature]featuregate.VersionedSpecs{")
    end = source.index("\n}\n", start)
    return source[start:end + 1]


def gates_in(path: Path, minor: int, wanted=lambda name: True) -> dict[str, GoGate]:
    """Every gate of the file (filtered by ``wanted``) that exists in 1.<minor>, as it holds there."""
    found: dict[str, GoGate] = {}
    for name, body in _ENTRY.findall(versioned_block(path.read_text())):
        if not wanted(name):
            continue
        holding = [s for s in _SPEC.findall(body) if int(s[0]) <= minor]
        if holding:
            _, default, stage, locked = holding[-1]
            found[name] = GoGate(_STAGES[stage], default == "true", locked == "true")
    return found


def dependencies_in(path: Path) -> dict[str, set[str]]:
    """Each gate's dependencies in ``defaultKubernetesFeatureGateDependencies`` (none before 1.35, which
    has no such map); package qualifiers such as ``genericfeatures.`` are dropped."""
    source = path.read_text()
    marker = "defaultKubernetesFeatureGateDependencies = map[featuregate.Feature][]featuregate.Feature{"
    if marker not in source:
        return {}
    start = source.index(marker)
    body = source[start + len(marker):source.index("\n}\n", start)]
    found = {}
    for name, deps in re.findall(r"^\t(?:\w+\.)?(\w+):\s*\{([^}]*)\}", body, re.MULTILINE):
        found[name] = {d.strip().split(".")[-1].rstrip(")") for d in deps.split(",") if d.strip()}
    return found


def is_dra_gate(name: str) -> bool:
    """DRA's own gates: ``DynamicResourceAllocation`` and every ``DRA*`` gate."""
    return name == "DynamicResourceAllocation" or name.startswith("DRA")


_LISTS = {
    "served": "stableAPIGroupVersionsEnabledByDefault",
    "beta": "betaAPIGroupVersionsDisabledByDefault",
    "alpha": "alphaAPIGroupVersionsDisabledByDefault",
}


def resource_versions(instance_go: Path) -> dict[str, list[str]]:
    """The ``resource.k8s.io`` versions in ``pkg/controlplane/instance.go``'s default lists:
    ``served`` (enabled by default), ``beta`` and ``alpha`` (off unless --runtime-config)."""
    source = instance_go.read_text()
    found = {}
    for key, var in _LISTS.items():
        start = source.index(f"\t{var} = []schema.GroupVersion{{")
        body = source[start:source.index("\n\t}", start)]
        found[key] = re.findall(r"\bresource(v\w+)\.SchemeGroupVersion", body)
    return found
