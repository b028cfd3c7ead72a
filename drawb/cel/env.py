"""The DRA CEL environments (API server NewExpressions, scheduler StoredExpressions) per Kubernetes version.

`env_spec` resolves a version, the stored flag and feature gates into an `EnvSpec`; `checker_env`
builds the C++ checker's environment of a spec from CEL's standard library, the cel-go extensions,
the declarations of `drawb.cel.library` and the `device` variable of `drawb.cel.device`.
"""

from __future__ import annotations

import functools
from typing import Mapping

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional

from drawb import versions
from drawb.cel import device, library
from drawb.cel.spec import EnvSpec
from drawb.errors import DrawbError

# The feature gates that change the DRA CEL environment.
CEL_GATES = ("DRAConsumableCapacity", "DRAListTypeAttributes")


class UnsupportedEnvironment(DrawbError, ValueError):
    """A Kubernetes version or feature gate that drawb's DRA CEL environment does not model."""

    hint = f"drawb models Kubernetes {versions.known()[0]} to {versions.newest()} and their DRA feature gates"


def environment_rules(kubernetes_version: str) -> versions.Rules:
    """The rules of the version whose CEL environment applies; UnsupportedEnvironment for one drawb does not
    model (a version newer than drawb knows gets the newest known environment, with a warning)."""
    try:
        return versions.rules(kubernetes_version)
    except (versions.NotAKubernetesVersion, versions.UnsupportedKubernetesVersion) as exc:
        raise UnsupportedEnvironment(f"kubernetes_version {kubernetes_version!r}: {exc}") from None


def env_spec(kubernetes_version: str, stored: bool, feature_gates: Mapping[str, bool] | None) -> EnvSpec:
    """Resolve version, stored flag and gates into the environment's declarations. Only the gates the
    CEL environment reads may be named; one that the version does not have yet changes nothing."""
    unknown = set(feature_gates or ()) - set(CEL_GATES)
    if unknown:
        raise UnsupportedEnvironment(f"unknown feature gate(s) {sorted(unknown)}; known: {sorted(CEL_GATES)}")
    rules = environment_rules(kubernetes_version)
    gates = {**rules.defaults(), **(feature_gates or {})}
    list_types = "DRAListTypeAttributes" in rules.gates  # list-valued attributes exist in this minor
    list_gate = list_types and bool(gates["DRAListTypeAttributes"])
    convert_lists = rules.has("cel.lists_always_converted") or list_gate
    int_to_duration = not rules.has("cel.no_int_to_duration")
    if stored:
        return EnvSpec(rules.number, True, True, list_types, True, convert_lists, int_to_duration)
    return EnvSpec(
        rules.number,
        False,
        bool(gates["DRAConsumableCapacity"]),
        list_gate,
        rules.has("cel.lists_library"),
        convert_lists,
        int_to_duration,
    )


@functools.lru_cache(maxsize=None)
def checker_env(spec: EnvSpec) -> cel.Env:
    """The C++ checker environment for one spec (cached)."""
    excluded = "".join(f'    - name: "{name}"\n' for name in ("string", "_<_", "_<=_", "_>_", "_>=_"))
    if not spec.int_to_duration:
        excluded += '    - name: "duration"\n      overloads:\n        - id: "int64_to_duration"\n'
    config = [f"stdlib:\n  exclude_functions:\n{excluded}", "extensions:\n"]
    config.append('  - name: "sets"\n  - name: "two-var-comprehensions"\n')
    if spec.ext_lists:
        config.append('  - name: "lists"\n')
    config.append(library.yaml_declarations())
    return cel.NewEnv(
        config=cel.NewEnvConfigFromYaml("".join(config)),
        extensions=[ext_optional.ExtOptional(), ext_bindings.ExtBindings()],
        variables=device.declarations(spec),
        functions=library.declarations(spec),
    )
