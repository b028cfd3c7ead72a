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

from drawb.cel import device, library
from drawb.cel.spec import EnvSpec
from drawb.errors import DrawbError

SUPPORTED_VERSIONS = ("1.34", "1.35", "1.36", "1.37")

# Feature gates that change the DRA CEL environment, with the minor version from which each is on
# by default (None: never on by default in the supported versions).
GATE_DEFAULTS = {"DRAConsumableCapacity": 36, "DRAListTypeAttributes": None}


class UnsupportedEnvironment(DrawbError, ValueError):
    """A Kubernetes version or feature gate that drawb's DRA CEL environment does not model."""

    hint = "drawb models Kubernetes 1.34 to 1.37 and their DRA feature gates"


def parse_minor(kubernetes_version: str) -> int:
    """`"1.34"` (or `"v1.34.2"`) -> 34; raises UnsupportedEnvironment for versions drawb does not model."""
    text = kubernetes_version.lstrip("v")
    parts = text.split(".")
    if len(parts) < 2 or parts[0] != "1" or not parts[1].isdigit():
        raise UnsupportedEnvironment(f"kubernetes_version {kubernetes_version!r}: expected a version like '1.34'")
    minor = int(parts[1])
    if not 34 <= minor <= 37:
        raise UnsupportedEnvironment(
            f"kubernetes_version {kubernetes_version!r}: drawb models the DRA CEL environment of "
            f"{', '.join(SUPPORTED_VERSIONS)}"
        )
    return minor


def gate_enabled(name: str, minor: int, feature_gates: Mapping[str, bool] | None) -> bool:
    """A feature gate's value: the explicit setting, else its default in that minor version."""
    if feature_gates and name in feature_gates:
        return bool(feature_gates[name])
    since = GATE_DEFAULTS[name]
    return since is not None and minor >= since


def env_spec(kubernetes_version: str, stored: bool, feature_gates: Mapping[str, bool] | None) -> EnvSpec:
    """Resolve version, stored flag and gates into the environment's declarations."""
    unknown = set(feature_gates or ()) - set(GATE_DEFAULTS)
    if unknown:
        raise UnsupportedEnvironment(f"unknown feature gate(s) {sorted(unknown)}; known: {sorted(GATE_DEFAULTS)}")
    minor = parse_minor(kubernetes_version)
    list_gate = gate_enabled("DRAListTypeAttributes", minor, feature_gates)
    convert_lists = minor >= 37 or (minor == 36 and list_gate)
    if stored:
        return EnvSpec(minor, True, True, minor >= 36, True, convert_lists)
    return EnvSpec(
        minor,
        False,
        gate_enabled("DRAConsumableCapacity", minor, feature_gates),
        minor >= 36 and list_gate,
        minor - 1 >= 34,
        convert_lists,
    )


@functools.lru_cache(maxsize=None)
def checker_env(spec: EnvSpec) -> cel.Env:
    """The C++ checker environment for one spec (cached)."""
    excluded = "".join(f'    - name: "{name}"\n' for name in ("string", "_<_", "_<=_", "_>_", "_>=_"))
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
