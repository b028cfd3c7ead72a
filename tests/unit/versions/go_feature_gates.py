"""Read the versioned feature gates of ``k8s.io/kubernetes`` from a release's Go source.

``pkg/features/kube_features.go`` maps each gate to its versioned specs (the version from which a
spec holds, its default, its stage and whether it is locked). The spec that holds in minor ``m`` is
the last one whose version is at most ``m``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

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
