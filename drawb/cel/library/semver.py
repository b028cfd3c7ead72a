"""The Kubernetes semver library, version 1 (with the normalizing overloads): semver(), isSemver, major, minor, patch."""

from __future__ import annotations

from typing import Any

from drawb.api.semver import Semver, SemverError
from drawb.cel.decls import B, I, SEMVER, S
from drawb.cel.library._registry import Impl, constant_cost, declare, fn, implement, is_str, string_arg_cost
from drawb.cel.values import CelError, SemverValue, dispatch_error


class _BadArguments(CelError):
    """A runtime argument no overload accepts (cel-go's type guard)."""


def _parse_semver(s: Any, normalize: Any, function: str, args: tuple) -> SemverValue:
    if not is_str(s) or type(normalize) is not bool:
        raise _BadArguments(dispatch_error(function, *args).message)
    try:
        return SemverValue(Semver.parse(s, normalize))
    except SemverError as err:
        raise CelError(str(err)) from None


@fn("semver", ("string_to_semver", [S], SEMVER, False), ("string_bool_to_semver", [S, B], SEMVER, False), cost=string_arg_cost)
def _semver(s: Any, *normalize: Any) -> SemverValue:
    return _parse_semver(s, normalize[0] if normalize else False, "semver", (s, *normalize))


@fn("isSemver", ("is_semver_string", [S], B, False), ("is_semver_string_bool", [S, B], B, False), cost=string_arg_cost)
def _is_semver(s: Any, *normalize: Any) -> bool:
    try:
        _parse_semver(s, normalize[0] if normalize else False, "isSemver", (s, *normalize))
    except _BadArguments:
        raise
    except CelError:
        return False
    return True


def _semver_part(name: str) -> Impl:
    def part(v: Any) -> int:
        if not isinstance(v, SemverValue):
            raise dispatch_error(name, v)
        return getattr(v.v, name)

    return part


for _name in ("major", "minor", "patch"):
    implement(_name, _semver_part(_name), cost=constant_cost)
    declare(_name, (f"semver_{_name}", [SEMVER], I, True))

# `isGreaterThan`, `isLessThan` and `compareTo` are implemented (for both types) in `quantity`.
declare("isGreaterThan", ("semver_is_greater_than", [SEMVER, SEMVER], B, True))
declare("isLessThan", ("semver_is_less_than", [SEMVER, SEMVER], B, True))
declare("compareTo", ("semver_compare_to", [SEMVER, SEMVER], I, True))
