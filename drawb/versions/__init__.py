"""The one model of the Kubernetes minors drawb supports (1.34 to 1.37).

``rules(version)`` answers everything that depends on the minor: each DRA feature gate's stage,
default and lock (and which components read it, which fields it guards), the ``resource.k8s.io``
versions a default API server serves, named behaviours (``has``, some of them brought by a patch
release), the allocator implementation the gates select, and the release whose facts these are. A full
version (``v1.36.3``) gets the behaviour of that patch; a bare minor (``1.36``) that of the newest patch
drawb knows. Every other module asks it; none compares
minors itself. ``parse`` is the one parser for version strings, ``parse_feature_gates`` for
``--feature-gates`` values.
"""

from __future__ import annotations

import difflib
import functools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from drawb.errors import DrawbError
from drawb.versions import allocator
from drawb.versions.facts import (AVAILABLE, BEHAVIOURS, FIELD_BEHAVIOURS, GATE_APIS, KIND_GATES, KIND_VERSIONS,
                                  NEWEST_PATCHES, PATCH_BEHAVIOURS, RELEASES, SERVED)
from drawb.versions.flags import MalformedFeatureGates, parse_feature_gates
from drawb.versions.gates import OTHER_HISTORIES, Gate, gates_of
from drawb.versions.parse import NotAKubernetesVersion, Version, parse

__all__ = [
    "DEFAULT", "Gate", "LockedFeatureGate", "MalformedFeatureGates", "NewerKubernetesVersion", "NotAKubernetesVersion",
    "Rules", "UnknownFeatureGate", "UnmetFeatureGateDependency", "UnsupportedKubernetesVersion", "Version",
    "is_dra_gate", "known", "known_rules", "newest", "parse", "parse_feature_gates", "rules", "rules_minor",
]

_MINORS = tuple(sorted(RELEASES))
DEFAULT = f"1.{_MINORS[0]}"  # the rules drawb checks with when neither the user nor a cluster names a version


class UnsupportedKubernetesVersion(DrawbError, ValueError):
    """A Kubernetes version older than the oldest drawb models."""

    hint = f"drawb models DRA as Kubernetes 1.{_MINORS[0]} to 1.{_MINORS[-1]} run it (resource.k8s.io/v1)"


class NewerKubernetesVersion(UserWarning):
    """A Kubernetes version newer than the newest drawb knows: checked with the newest known rules."""


class UnknownFeatureGate(DrawbError, ValueError):
    """A DRA feature gate that the Kubernetes minor in question does not have."""


class LockedFeatureGate(DrawbError, ValueError):
    """A gate set against its locked default: the component would refuse to start."""


class UnmetFeatureGateDependency(DrawbError, ValueError):
    """A gate set on while a gate it depends on is set off: the components would refuse to start."""


def known() -> list[str]:
    """The minors drawb models, oldest first: ``["1.34", "1.35", "1.36", "1.37"]``."""
    return [f"1.{minor}" for minor in _MINORS]


def newest() -> str:
    """The newest minor drawb knows."""
    return f"1.{_MINORS[-1]}"


@dataclass(frozen=True)
class Rules:
    """What one Kubernetes minor does, as far as DRA goes, at one of its patches."""

    minor: str  # "1.36": the minor whose rules these are
    number: int  # 36
    release: str  # "v1.36.3": the release the gate and API facts come from
    patch: int  # 6: the patch whose behaviours ``has`` answers for (the newest drawb knows for a bare minor)
    gates: Mapping[str, Gate] = field(repr=False, compare=False)  # every DRA gate this minor has
    # the gates outside DRA that a DRA gate of this minor depends on (GenericWorkload, ...)
    dependency_gates: Mapping[str, Gate] = field(default_factory=dict, repr=False, compare=False)
    served: tuple[str, ...] = field(default=("v1",), compare=False)  # resource.k8s.io versions served by default
    available: tuple[str, ...] = field(default=("v1",), compare=False)  # ... and those --runtime-config turns on

    def has(self, behaviour: str) -> bool:
        """Whether this minor, at ``patch``, has a named behaviour (``drawb.versions.facts.BEHAVIOURS`` and
        ``PATCH_BEHAVIOURS``)."""
        if behaviour in PATCH_BEHAVIOURS:
            first = PATCH_BEHAVIOURS[behaviour].get(self.number)
            return first is not None and self.patch >= first
        try:
            return self.number >= BEHAVIOURS[behaviour]
        except KeyError:
            known_names = sorted([*BEHAVIOURS, *PATCH_BEHAVIOURS])
            raise KeyError(f"unknown behaviour {behaviour!r}; known: {', '.join(known_names)}") from None

    def fixed_in(self, behaviour: str) -> str:
        """``"v1.35.6"``: the first release of this minor with a patch behaviour (``PATCH_BEHAVIOURS``)."""
        return f"v{self.minor}.{PATCH_BEHAVIOURS[behaviour][self.number]}"

    @property
    def version(self) -> str:
        """``"v1.36.6"``: the release whose behaviour these rules give."""
        return f"v{self.minor}.{self.patch}"

    def kind_versions(self, kind: str) -> tuple[str, ...]:
        """The ``resource.k8s.io`` versions that have ``kind`` (``DeviceTaintRule``...) in this minor, the
        preferred first; empty when the minor lacks it."""
        return _holding(KIND_VERSIONS[kind], self.number) or ()

    def kind_gate(self, kind: str) -> str | None:
        """The gate the components acting on ``kind`` read in this minor (None: the minor lacks the kind)."""
        return _holding(KIND_GATES[kind], self.number)

    @property
    def field_gates(self) -> tuple[str, ...]:
        """The gates that can be turned off and then make the API server drop fields or objects."""
        return tuple(name for name, gate in self.gates.items() if gate.fields and not gate.locked)

    def dropped_fields(self, overrides: Mapping[str, bool] | None = None) -> frozenset[str]:
        """The fields (as the gates name them: ``"constraints[].distinctAttribute"``) that an API server with these
        gates drops from new objects."""
        values = self.gate_values(overrides, enforce_locks=False)
        return frozenset(name for gate, on in values.items() if not on for name in self.gates[gate].fields
                         if name not in FIELD_BEHAVIOURS or self.has(FIELD_BEHAVIOURS[name]))

    def defaults(self) -> dict[str, bool]:
        """Every gate's default."""
        return {name: gate.default for name, gate in self.gates.items()}

    def gate_values(self, overrides: Mapping[str, bool] | None = None, *, enforce_locks: bool = True) -> dict[str, bool]:
        """Every DRA gate's value with ``overrides`` applied (gates outside DRA are ignored).

        A DRA gate this minor does not have raises UnknownFeatureGate; a locked gate set against its
        default raises LockedFeatureGate: a component would not start with either. ``enforce_locks=False``
        is for the allocator library, which takes any feature set (the lock is a component's check)."""
        values = self.defaults()
        for name, value in (overrides or {}).items():
            gate = self.gates.get(name)
            if gate is None:
                if is_dra_gate(name):
                    raise UnknownFeatureGate(f"feature gate {name!r} does not exist in Kubernetes {self.minor}",
                                             hint=self._missing_gate_hint(name))
                continue
            if enforce_locks and gate.locked and bool(value) != gate.default:
                raise LockedFeatureGate(
                    f"feature gate {name} is locked to {str(gate.default).lower()} in Kubernetes {self.minor} "
                    f"({gate.stage}); it cannot be set to {str(bool(value)).lower()}",
                    hint=f"remove {name} from the feature gates")
            values[name] = bool(value)
        return values

    def with_dependencies(self, overrides: Mapping[str, bool]) -> dict[str, bool]:
        """``overrides`` plus the gates the components need to start with them: each gate on turns on the
        gates it depends on, transitively (also those outside DRA, such as GenericWorkload), and each gate
        turned off turns off the gates that depend on it. "Every DRA gate on" is
        ``with_dependencies(dict.fromkeys(field_gates, True))``. A gate ``overrides`` sets on that needs one it
        sets off raises UnmetFeatureGateDependency. (A locked gate never depends on an unlocked one, so no
        dependency moves a locked gate.)"""
        self.gate_values(overrides)  # unknown DRA gates and locks
        every = {**self.dependency_gates, **self.gates}
        values = {name: gate.default for name, gate in every.items()} | dict(overrides)
        result = dict(overrides)
        changed = True
        while changed:
            changed = False
            for name, gate in every.items():
                off = [dep for dep in gate.needs if not values.get(dep, False)] if values[name] else []
                for dep in off:
                    if dep in overrides and name in overrides:
                        raise UnmetFeatureGateDependency(
                            f"feature gate {name} is set on, but depends on {dep}, which is set off "
                            f"(Kubernetes {self.minor}'s components refuse to start)",
                            hint=f"turn {dep} on, or {name} off")
                    flip, value = (name, False) if dep in overrides else (dep, True)
                    values[flip] = result[flip] = value
                    changed = True
        return result

    def apis_for(self, gate_values: Mapping[str, bool]) -> tuple[str, ...]:
        """The group versions, off by default, that a cluster with these gates must serve to become ready."""
        return tuple(sorted(GATE_APIS[name][self.number] for name, on in gate_values.items()
                            if on and self.number in GATE_APIS.get(name, {})))

    def gates_needing_api(self, api_version: str) -> tuple[str, ...]:
        """The gates whose objects live in ``api_version`` (a group version off by default) in this minor."""
        return tuple(sorted(name for name, apis in GATE_APIS.items() if apis.get(self.number) == api_version))

    def _missing_gate_hint(self, name: str) -> str:
        """What to write instead of a DRA gate this minor lacks: the version that has it, or the spelling."""
        having = [minor for minor in known() if name in _rules_of(int(minor.split(".")[1])).gates]
        if having:
            where = f"{having[0]} and later" if having[-1] == newest() else f"{having[0]} to {having[-1]}"
            fix = f"{name} is in Kubernetes {where}: choose such a version, or leave the gate out"
        else:
            close = difflib.get_close_matches(name, sorted(self.gates), n=1)
            fix = f"did you mean {close[0]}?" if close else f"no Kubernetes version drawb knows has {name}"
        return f"{fix} ({self.minor}'s DRA gates: {', '.join(sorted(self.gates))})"

    def allocator_features(self, gate_values: Mapping[str, bool]) -> frozenset[str]:
        """The scheduler's allocator features for these gate values."""
        return allocator.features(self.number, gate_values)

    def allocator(self, gate_values: Mapping[str, bool]) -> str | None:
        """The allocator implementation (``stable``, ``incubating``, ``experimental``) these gates select."""
        return allocator.implementation(self.number, self.allocator_features(gate_values))


def has(number: int, behaviour: str) -> bool:
    """Whether Kubernetes 1.<number> (at the newest patch drawb knows) has a named behaviour (``Rules.has``)."""
    return _rules_of(min(max(number, _MINORS[0]), _MINORS[-1])).has(behaviour)


def _holding(history: tuple, number: int):
    """The value of a ``((since, value), ...)`` history at minor ``number`` (None before the first)."""
    held = [value for since, value in history if since <= number]
    return held[-1] if held else None


def is_dra_gate(name: str) -> bool:
    """DRA's own gates: ``DynamicResourceAllocation`` and the ``DRA*`` gates."""
    return name == "DynamicResourceAllocation" or name.startswith("DRA")


@functools.lru_cache(maxsize=None)
def _rules_of(number: int, patch: int | None = None) -> Rules:
    """The rules of 1.<number> at ``patch`` (None: the newest patch drawb knows)."""
    gates = gates_of(number)
    needed = {dep for gate in gates.values() for dep in gate.needs}
    others = {name: gate for name, gate in gates_of(number, OTHER_HISTORIES).items() if name in needed}
    patch = NEWEST_PATCHES[number] if patch is None else patch
    return Rules(minor=f"1.{number}", number=number, release=RELEASES[number], patch=patch, gates=gates,
                 dependency_gates=others, served=SERVED, available=AVAILABLE)


def known_rules(version: str | Version) -> tuple[Rules | None, bool]:
    """The rules that apply to ``version`` without a warning, and whether it is newer than drawb knows
    (``(None, False)`` for one older than the oldest known); NotAKubernetesVersion for no version."""
    parsed = version if isinstance(version, Version) else parse(version)
    if parsed.major != 1 or parsed.minor < _MINORS[0]:
        return None, False
    newer = parsed.minor > _MINORS[-1]
    return _rules_of(min(parsed.minor, _MINORS[-1]), None if newer else parsed.patch), newer


def rules_minor(version: str | Version) -> str:
    """The minor whose rules apply to ``version``, without a warning: its own when known, the newest
    known for a newer one, and its own for an older one (which drawb refuses to check with)."""
    found, _ = known_rules(version)
    return found.minor if found is not None else (version if isinstance(version, Version) else parse(version)).minor_text


def rules(version: str | Version) -> Rules:
    """The rules of a Kubernetes version (``"1.36"``, ``"v1.36.3-gke.1200"``, ...).

    A full version gets the behaviours of its patch (``rules("v1.36.3").has(...)``); a bare minor
    (``"1.36"``) those of the newest patch of that minor drawb knows (``facts.NEWEST_PATCHES``).
    Newer than the newest known: the newest known rules, with a NewerKubernetesVersion warning.
    Older than the oldest known, or not 1.x: UnsupportedKubernetesVersion."""
    parsed = version if isinstance(version, Version) else parse(version)
    found, newer = known_rules(parsed)
    if found is None:
        raise UnsupportedKubernetesVersion(
            f"Kubernetes {parsed.minor_text} is older than drawb models (1.{_MINORS[0]} to 1.{_MINORS[-1]})")
    if newer:
        warnings.warn(NewerKubernetesVersion(
            f"Kubernetes {parsed.minor_text} is newer than drawb knows ({newest()}): checking with {newest()} rules"),
            stacklevel=2)
    return found
