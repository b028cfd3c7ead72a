"""The DRA CEL environments (API server NewExpressions, scheduler StoredExpressions) per Kubernetes version."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional

from drawb.cel import device
from drawb.cel.decls import B, CIDR, D, FORMAT, I, IP, QUANTITY, SEMVER, URL, S, T, U, declare

SUPPORTED_VERSIONS = ("1.34", "1.35", "1.36", "1.37")

# Feature gates that change the DRA CEL environment, with the minor version from which each is on
# by default (None: never on by default in the supported versions).
GATE_DEFAULTS = {"DRAConsumableCapacity": 36, "DRAListTypeAttributes": None}


@dataclass(frozen=True)
class EnvSpec:
    """Which declarations an environment has; derived from version, stored flag and gates."""

    minor: int
    stored: bool
    allow_multiple_allocations: bool  # device.allowMultipleAllocations declared
    list_attributes: bool  # attribute values typed dyn, `includes` declared
    ext_lists: bool  # cel-go ext.Lists v3 (slice, flatten, sort, ...)
    convert_list_attributes: bool  # the scheduler turns list-valued attributes into CEL lists

    @property
    def attribute_type(self) -> str:
        """The declared type of one attribute value: `dyn` with list attributes, else `any`."""
        return "dyn" if self.list_attributes else "any"


def parse_minor(kubernetes_version: str) -> int:
    """`"1.34"` (or `"v1.34.2"`) -> 34; raises ValueError for versions drawb does not model."""
    text = kubernetes_version.lstrip("v")
    parts = text.split(".")
    if len(parts) < 2 or parts[0] != "1" or not parts[1].isdigit():
        raise ValueError(f"kubernetes_version {kubernetes_version!r}: expected a version like '1.34'")
    minor = int(parts[1])
    if not 34 <= minor <= 37:
        raise ValueError(
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
        raise ValueError(f"unknown feature gate(s) {sorted(unknown)}; known: {sorted(GATE_DEFAULTS)}")
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


# --- declarations ---------------------------------------------------------------------------

FORMAT_NAMES = (
    "dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName", "dns1123LabelPrefix",
    "dns1123SubdomainPrefix", "dns1035LabelPrefix", "labelValue", "uri", "uuid", "byte", "date",
    "datetime",
)  # fmt: skip


def _k8s_declarations(spec: EnvSpec) -> list[cel.FunctionDecl]:
    comparable = [("bool", B), ("int", I), ("uint", U), ("double", D), ("bytes", T.BYTES), ("string", S),
                  ("duration", T.DURATION), ("timestamp", T.TIMESTAMP)]  # fmt: skip
    summable = [("int", I), ("uint", U), ("double", D), ("duration", T.DURATION)]
    decls = [
        # quantity
        declare("quantity", ("string_to_quantity", [S], QUANTITY, False)),
        declare("isQuantity", ("is_quantity_string", [S], B, False)),
        declare("sign", ("quantity_sign", [QUANTITY], I, False)),
        declare("asApproximateFloat", ("quantity_get_float", [QUANTITY], D, True)),
        declare("asInteger", ("quantity_get_int", [QUANTITY], I, True)),
        declare("isInteger", ("quantity_is_integer", [QUANTITY], B, True)),
        declare("add", ("quantity_add", [QUANTITY, QUANTITY], QUANTITY, True),
              ("quantity_add_int", [QUANTITY, I], QUANTITY, True)),
        declare("sub", ("quantity_sub", [QUANTITY, QUANTITY], QUANTITY, True),
              ("quantity_sub_int", [QUANTITY, I], QUANTITY, True)),
        # quantity + semver share these names
        declare("isGreaterThan", ("quantity_is_greater_than", [QUANTITY, QUANTITY], B, True),
              ("semver_is_greater_than", [SEMVER, SEMVER], B, True)),
        declare("isLessThan", ("quantity_is_less_than", [QUANTITY, QUANTITY], B, True),
              ("semver_is_less_than", [SEMVER, SEMVER], B, True)),
        declare("compareTo", ("quantity_compare_to", [QUANTITY, QUANTITY], I, True),
              ("semver_compare_to", [SEMVER, SEMVER], I, True)),
        # semver (library version 1: normalize overloads)
        declare("semver", ("string_to_semver", [S], SEMVER, False),
              ("string_bool_to_semver", [S, B], SEMVER, False)),
        declare("isSemver", ("is_semver_string", [S], B, False), ("is_semver_string_bool", [S, B], B, False)),
        declare("major", ("semver_major", [SEMVER], I, True)),
        declare("minor", ("semver_minor", [SEMVER], I, True)),
        declare("patch", ("semver_patch", [SEMVER], I, True)),
        # kubernetes lists (version 0)
        declare("isSorted", *[(f"list_{n}_is_sorted_bool", [T.List(t)], B, True) for n, t in comparable]),
        declare("sum", *[(f"list_{n}_sum_{n}", [T.List(t)], t, True) for n, t in summable]),
        declare("max", *[(f"list_{n}_max_{n}", [T.List(t)], t, True) for n, t in comparable]),
        declare("min", *[(f"list_{n}_min_{n}", [T.List(t)], t, True) for n, t in comparable]),
        # cel-go ext.Strings version 2 (declared here because `indexOf`/`lastIndexOf` are shared)
        declare("charAt", ("string_char_at_int", [S, I], S, True)),
        declare("lowerAscii", ("string_lower_ascii", [S], S, True)),
        declare("upperAscii", ("string_upper_ascii", [S], S, True)),
        declare("replace", ("string_replace_string_string", [S, S, S], S, True),
              ("string_replace_string_string_int", [S, S, S, I], S, True)),
        declare("split", ("string_split_string", [S, S], T.List(S), True),
              ("string_split_string_int", [S, S, I], T.List(S), True)),
        declare("substring", ("string_substring_int", [S, I], S, True),
              ("string_substring_int_int", [S, I, I], S, True)),
        declare("trim", ("string_trim", [S], S, True)),
        declare("format", ("string_format", [S, T.List(T.DYN)], S, True)),
        declare("strings.quote", ("strings_quote", [S], S, False)),
        declare("join", ("list_join", [T.List(S)], S, True), ("list_join_string", [T.List(S), S], S, True)),
        # regex
        declare("find", ("string_find_string", [S, S], S, True)),
        declare("findAll", ("string_find_all_string", [S, S], T.List(S), True),
              ("string_find_all_string_int", [S, S, I], T.List(S), True)),
        # urls
        declare("url", ("string_to_url", [S], URL, False)),
        declare("isURL", ("is_url_string", [S], B, False)),
        declare("getScheme", ("url_get_scheme", [URL], S, True)),
        declare("getHost", ("url_get_host", [URL], S, True)),
        declare("getHostname", ("url_get_hostname", [URL], S, True)),
        declare("getPort", ("url_get_port", [URL], S, True)),
        declare("getEscapedPath", ("url_get_escaped_path", [URL], S, True)),
        declare("getQuery", ("url_get_query", [URL], T.Map(S, T.List(S)), True)),
        # ip / cidr
        declare("ip", ("string_to_ip", [S], IP, False), ("cidr_ip", [CIDR], IP, True)),
        declare("family", ("ip_family", [IP], I, True)),
        declare("ip.isCanonical", ("ip_is_canonical", [S], B, False)),
        declare("isUnspecified", ("ip_is_unspecified", [IP], B, True)),
        declare("isLoopback", ("ip_is_loopback", [IP], B, True)),
        declare("isLinkLocalMulticast", ("ip_is_link_local_multicast", [IP], B, True)),
        declare("isLinkLocalUnicast", ("ip_is_link_local_unicast", [IP], B, True)),
        declare("isGlobalUnicast", ("ip_is_global_unicast", [IP], B, True)),
        declare("isIP", ("is_ip", [S], B, False)),
        declare("cidr", ("string_to_cidr", [S], CIDR, False)),
        declare("containsIP", ("cidr_contains_ip_string", [CIDR, S], B, True),
              ("cidr_contains_ip_ip", [CIDR, IP], B, True)),
        declare("containsCIDR", ("cidr_contains_cidr_string", [CIDR, S], B, True),
              ("cidr_contains_cidr", [CIDR, CIDR], B, True)),
        declare("prefixLength", ("cidr_prefix_length", [CIDR], I, True)),
        declare("masked", ("cidr_masked", [CIDR], CIDR, True)),
        declare("isCIDR", ("is_cidr", [S], B, False)),
        # format
        *[declare(f"format.{n}", (f"format.{n}", [], FORMAT, False)) for n in FORMAT_NAMES],
        # string() conversions (the standard ones plus ip/cidr); the stdlib's `string` is excluded
        declare("string", ("int64_to_string", [I], S, False), ("uint64_to_string", [U], S, False),
              ("double_to_string", [D], S, False), ("bytes_to_string", [T.BYTES], S, False),
              ("string_to_string", [S], S, False), ("bool_to_string", [B], S, False),
              ("timestamp_to_string", [T.TIMESTAMP], S, False),
              ("duration_to_string", [T.DURATION], S, False),
              ("ip_to_string", [IP], S, False), ("cidr_to_string", [CIDR], S, False)),
    ]  # fmt: skip
    # ordering with cel.CrossTypeNumericComparisons(true), which the C++ checker lacks
    scalar = [("bool", B), ("int64", I), ("uint64", U), ("double", D), ("string", S), ("bytes", T.BYTES),
              ("timestamp", T.TIMESTAMP), ("duration", T.DURATION)]  # fmt: skip
    numeric = [("int64", I), ("uint64", U), ("double", D)]
    for op, prefix in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")):
        overloads = [(f"{prefix}_{n}", [t, t], B, False) for n, t in scalar]
        overloads += [(f"{prefix}_{a}_{b}", [ta, tb], B, False) for a, ta in numeric for b, tb in numeric if a != b]
        decls.append(declare(op, *overloads))
    if spec.list_attributes:
        decls.append(declare("includes", ("dra_includes_dyn_dyn", [T.DYN, T.DYN], B, True)))
    return decls


def _yaml_overload(oid: str, target: str, args: list[str]) -> str:
    def ty(name: str, indent: str) -> str:
        if name == "list(A)":
            return (f'{indent}type_name: "list"\n{indent}params:\n'
                    f'{indent}  - type_name: "A"\n{indent}    is_type_param: true\n')
        if name == "A":
            return f'{indent}type_name: "A"\n{indent}is_type_param: true\n'
        return f'{indent}type_name: "{name}"\n'

    out = f'      - id: "{oid}"\n        target:\n{ty(target, "          ")}        args:\n'
    for arg in args:
        out += "          -" + ty(arg, "            ")[11:]
    return out + '        return:\n          type_name: "int"\n'


_FORMAT_YAML = """  - name: "validate"
    overloads:
      - id: "format-validate"
        target:
          type_name: "kubernetes.NamedFormat"
        args:
          - type_name: "string"
        return:
          type_name: "optional_type"
          params:
            - type_name: "list"
              params:
                - type_name: "string"
  - name: "format.named"
    overloads:
      - id: "format-named"
        args:
          - type_name: "string"
        return:
          type_name: "optional_type"
          params:
            - type_name: "kubernetes.NamedFormat"
"""


# `indexOf` / `lastIndexOf` mix ext.Strings overloads with the Kubernetes lists library's
# type-parameterized ones; only the YAML configuration can declare type parameters.
_INDEX_OF_YAML = "functions:\n" + "".join(
    f'  - name: "{name}"\n    overloads:\n'
    + _yaml_overload(f"string_{snake}_string", "string", ["string"])
    + _yaml_overload(f"string_{snake}_string_int", "string", ["string", "int"])
    + _yaml_overload(f"list_a_{snake}_int", "list(A)", ["A"])
    for name, snake in (("indexOf", "index_of"), ("lastIndexOf", "last_index_of"))
) + _FORMAT_YAML


@functools.lru_cache(maxsize=None)
def checker_env(spec: EnvSpec) -> cel.Env:
    """The C++ checker environment for one spec (cached)."""
    excluded = "".join(f'    - name: "{name}"\n' for name in ("string", "_<_", "_<=_", "_>_", "_>=_"))
    config = [f"stdlib:\n  exclude_functions:\n{excluded}", "extensions:\n"]
    config.append('  - name: "sets"\n  - name: "two-var-comprehensions"\n')
    if spec.ext_lists:
        config.append('  - name: "lists"\n')
    config.append(_INDEX_OF_YAML)
    return cel.NewEnv(
        config=cel.NewEnvConfigFromYaml("".join(config)),
        extensions=[ext_optional.ExtOptional(), ext_bindings.ExtBindings()],
        variables=device.declarations(spec),
        functions=_k8s_declarations(spec),
    )
