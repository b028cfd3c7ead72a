"""Which allocator a scheduler runs, as ``drawb.versions`` says: the version, the gate values, the
enabled allocator features and the implementation (stable, incubating or experimental) they select."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from drawb import versions
from drawb.alloc.errors import AllocationError

@dataclass(frozen=True)
class Flavor:
    """One run of the allocator: the version, its implementation and the enabled features."""

    minor: int
    impl: str  # "stable", "incubating" or "experimental"
    features: frozenset[str]
    gates: tuple[tuple[str, bool], ...]
    patch: int | None = None  # the release's patch (None: the newest patch of the minor drawb knows)

    def has(self, feature: str) -> bool:
        """Whether an allocator feature is enabled."""
        return feature in self.features

    @property
    def binding(self) -> bool:
        """Devices with binding conditions may be allocated (both binding gates on)."""
        return {"DeviceBinding", "DeviceStatus"} <= self.features or "DeviceBindingAndStatus" in self.features

    def behaves(self, behaviour: str) -> bool:
        """Whether this release of the minor has a named behaviour (``drawb.versions.Rules.has``)."""
        return self.version_rules.has(behaviour)

    @property
    def version_rules(self) -> versions.Rules:
        """The rules of this release (the newest patch drawb knows when ``patch`` is None)."""
        patch = "" if self.patch is None else f".{self.patch}"
        return versions.rules(f"1.{self.minor}{patch}")


def minor_of(kubernetes_version: str) -> int:
    """34 for "1.34" or "v1.34.4" (the newest known minor, with a warning, for a newer version);
    AllocationError for a version drawb does not model."""
    return _rules(kubernetes_version).number


def _rules(kubernetes_version: str) -> versions.Rules:
    try:
        return versions.rules(str(kubernetes_version))
    except (versions.NotAKubernetesVersion, versions.UnsupportedKubernetesVersion) as exc:
        raise AllocationError(f"kubernetes_version {kubernetes_version!r}: {exc}; the allocator is modelled for "
                              f"{', '.join(versions.known())}") from None


def gate_values(minor: int, feature_gates: Mapping[str, bool] | None) -> dict[str, bool]:
    """Every DRA gate of 1.<minor>, with the version's default where not named; gates outside DRA are
    ignored, and a DRA gate this version does not have is an AllocationError (the scheduler would not start).
    Locked gates may be set either way: the allocator library takes any feature set, as upstream's tests do."""
    try:
        return versions.rules(f"1.{minor}").gate_values(feature_gates, enforce_locks=False)
    except (versions.UnknownFeatureGate, versions.LockedFeatureGate) as exc:
        raise AllocationError(str(exc), hint=exc.hint) from None


def choose(minor: int, features: frozenset[str]) -> str:
    """The most stable implementation that supports every enabled feature (``NewAllocator``)."""
    impl = versions.allocator.implementation(minor, features)
    if impl is None:
        raise AllocationError(f"internal error: no allocator available for feature set {sorted(features)}")
    return impl


def flavor(kubernetes_version: str, feature_gates: Mapping[str, bool] | None, impl: str | None = None) -> Flavor:
    """The allocator the scheduler of this version runs with these gates (``impl`` forces one, for tests)."""
    return _flavor(str(kubernetes_version), tuple(sorted((feature_gates or {}).items())), impl)


@lru_cache(maxsize=256)
def _flavor(kubernetes_version: str, feature_gates: tuple[tuple[str, bool], ...], impl: str | None) -> Flavor:
    rules = _rules(kubernetes_version)
    gates = gate_values(rules.number, dict(feature_gates))
    features = rules.allocator_features(gates)
    return Flavor(rules.number, impl or choose(rules.number, features), features, tuple(sorted(gates.items())),
                  rules.patch)
