"""The Kubernetes version and DRA feature gates one simulated cluster runs, as its components report them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from drawb import versions
from drawb.errors import DrawbError

DRA_ITSELF = "DynamicResourceAllocation"


class DraTurnedOff(DrawbError, ValueError):
    """The DynamicResourceAllocation gate set off: the API server would not serve resource.k8s.io at all."""

    hint = f"leave {DRA_ITSELF} out of the feature gates"


@dataclass(frozen=True)
class SimulatedVersion:
    """The simulated API server's, scheduler's and kubelets' version, and the gates they run with."""

    release: str  # what server_version() and the kubelets report: "v1.36.6"
    rules: versions.Rules  # the release's rules (the newest drawb knows for a newer version)
    gates: dict[str, bool]  # every DRA gate of the minor, the defaults with the chosen ones applied
    apis: tuple[str, ...] = ()  # group versions, off by default, these gates need served: "scheduling.k8s.io/v1alpha2"


def simulated_version(version: str | None = None, gates: Mapping[str, bool] | None = None) -> SimulatedVersion:
    """``version`` (``"1.36"``: the newest patch of that minor drawb knows; a full ``"v1.36.1"`` as given;
    None: drawb's default) with ``gates`` set on every component.

    A version newer than drawb knows runs the newest rules (NewerKubernetesVersion warns); an older one is
    UnsupportedKubernetesVersion. A gate outside the minor's DRA gates is UnknownFeatureGate, a locked gate
    set against its default LockedFeatureGate, DynamicResourceAllocation off DraTurnedOff."""
    parsed = versions.parse(version or versions.DEFAULT)
    rules = versions.rules(parsed)
    release = rules.version if parsed.patch is None and parsed.minor == rules.number else str(parsed)
    for name in gates or {}:
        if not versions.is_dra_gate(name):
            raise versions.UnknownFeatureGate(
                f"feature gate {name!r} is not a DRA gate: the simulated cluster has Kubernetes {rules.minor}'s "
                "DRA gates alone", hint=f"leave it out; {rules.minor}'s DRA gates are {', '.join(sorted(rules.gates))}")
    values = rules.gate_values(gates)
    if not values[DRA_ITSELF]:
        raise DraTurnedOff(f"{DRA_ITSELF}=false turns DRA off (no resource.k8s.io API, no DRA scheduling): the "
                           "simulated cluster models DRA and does not run without it")
    needed = rules.with_dependencies({name: True for name, on in values.items() if on})
    return SimulatedVersion(release, rules, values, rules.apis_for(needed))
