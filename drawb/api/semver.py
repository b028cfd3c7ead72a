"""Semantic versions exactly as the Kubernetes CEL semver library parses and compares them.

Strict parsing is ``github.com/blang/semver/v4`` ``Parse`` (v4.0.0, the version Kubernetes pins);
the normalizing form is ``k8s.io/apiserver/pkg/cel/library.normalizeAndParse`` (CEL
``semver(s, true)``). Error messages are the Go ones, byte for byte.
"""

from __future__ import annotations

from typing import Final

from drawb.api._go import go_quote
from drawb.errors import DrawbError

__all__ = ["Semver", "SemverError", "is_semver"]

_DIGITS: Final = frozenset("0123456789")
_ALPHANUM: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_UINT64_MAX: Final = (1 << 64) - 1


class SemverError(DrawbError, ValueError):
    """A string is not a semantic version (message worded as blang/semver's)."""


def _only(s: str, allowed: frozenset[str]) -> bool:
    return all(c in allowed for c in s)


def _parse_uint(s: str) -> int:
    """Go's ``strconv.ParseUint(s, 10, 64)`` for a digits-only string, with its error text."""
    if not s:
        raise SemverError(f"strconv.ParseUint: parsing {go_quote(s)}: invalid syntax")
    n = int(s) if len(s) <= 20 else _UINT64_MAX + 1
    if n > _UINT64_MAX:
        raise SemverError(f"strconv.ParseUint: parsing {go_quote(s)}: value out of range")
    return n


def _number(s: str, what: str) -> int:
    if not _only(s, _DIGITS):
        raise SemverError(f"Invalid character(s) found in {what.lower()} number {go_quote(s)}")
    if len(s) > 1 and s[0] == "0":
        raise SemverError(f"{what} number must not contain leading zeroes {go_quote(s)}")
    return _parse_uint(s)


def _prerelease(s: str) -> int | str:
    if not s:
        raise SemverError("Prerelease is empty")
    if _only(s, _DIGITS):
        if len(s) > 1 and s[0] == "0":
            raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {go_quote(s)}")
        return _parse_uint(s)
    if _only(s, _ALPHANUM):
        return s
    raise SemverError(f"Invalid character(s) found in prerelease {go_quote(s)}")


def _compare_pre(a: tuple[int | str, ...], b: tuple[int | str, ...]) -> int:
    if not a or not b:
        return (not a) - (not b)  # a release sorts after its pre-releases
    for x, y in zip(a, b):
        if x == y:
            continue
        xi, yi = isinstance(x, int), isinstance(y, int)
        if xi != yi:
            return -1 if xi else 1  # numeric identifiers sort before alphanumeric ones
        return 1 if x > y else -1  # type: ignore[operator]
    return (len(a) > len(b)) - (len(a) < len(b))


class Semver:
    """An immutable semantic version; equality and order ignore build metadata, as in Kubernetes.

    ``major``/``minor``/``patch`` hold the exact uint64 values; Kubernetes CEL's ``major()`` etc.
    return them as int64, so values of 2**63 and above wrap negative there.
    """

    __slots__ = ("major", "minor", "patch", "pre", "build")

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...]
    build: tuple[str, ...]

    def __init__(self, text: str, normalize: bool = False) -> None:
        """Parse ``text``; see :meth:`parse`."""
        v = Semver.parse(text, normalize)
        for name in Semver.__slots__:
            object.__setattr__(self, name, getattr(v, name))

    @classmethod
    def _make(cls, major: int, minor: int, patch: int, pre: tuple, build: tuple) -> Semver:
        v = object.__new__(cls)
        for name, value in zip(cls.__slots__, (major, minor, patch, pre, build)):
            object.__setattr__(v, name, value)
        return v

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        """CEL ``semver(text)`` (strict) or ``semver(text, true)`` (normalizing); SemverError if invalid."""
        if not isinstance(text, str):
            raise TypeError(f"version must be a string, not {type(text).__name__}")
        return _parse(_normalize(text) if normalize else text)

    def compare_to(self, other: Semver) -> int:
        """-1, 0 or 1 by semver precedence; build metadata is ignored."""
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return 1 if a > b else -1
        return _compare_pre(self.pre, other.pre)

    def is_greater_than(self, other: Semver) -> bool:
        """CEL ``isGreaterThan``."""
        return self.compare_to(other) == 1

    def is_less_than(self, other: Semver) -> bool:
        """CEL ``isLessThan``."""
        return self.compare_to(other) == -1

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Semver is immutable")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Semver):
            return self.compare_to(other) == 0
        return NotImplemented

    def __lt__(self, other: Semver) -> bool:
        if isinstance(other, Semver):
            return self.compare_to(other) < 0
        return NotImplemented

    def __le__(self, other: Semver) -> bool:
        if isinstance(other, Semver):
            return self.compare_to(other) <= 0
        return NotImplemented

    def __gt__(self, other: Semver) -> bool:
        if isinstance(other, Semver):
            return self.compare_to(other) > 0
        return NotImplemented

    def __ge__(self, other: Semver) -> bool:
        if isinstance(other, Semver):
            return self.compare_to(other) >= 0
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"

    def __reduce__(self) -> tuple:
        return (Semver._make, (self.major, self.minor, self.patch, self.pre, self.build))


def _parse(s: str) -> Semver:
    """blang/semver v4 ``Parse``."""
    if not s:
        raise SemverError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "Major")
    minor = _number(parts[1], "Minor")
    rest = parts[2]
    build: list[str] = []
    pre_text: list[str] = []
    plus = rest.find("+")
    if plus != -1:
        build = rest[plus + 1 :].split(".")
        rest = rest[:plus]
    dash = rest.find("-")
    if dash != -1:
        pre_text = rest[dash + 1 :].split(".")
        rest = rest[:dash]
    patch = _number(rest, "Patch")
    pre = tuple(_prerelease(p) for p in pre_text)
    for b in build:
        if not b:
            raise SemverError("Build meta data is empty")
        if not _only(b, _ALPHANUM):
            raise SemverError(f"Invalid character(s) found in build meta data {go_quote(b)}")
    return Semver._make(major, minor, patch, pre, tuple(build))


def _normalize(s: str) -> str:
    """The apiserver's ``normalizeAndParse`` rewrite: drop one 'v', leading zeros, pad to x.y.z."""
    s = s.removeprefix("v")
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p.encode()) > 1:  # Go counts bytes: a lone "é" becomes "0é"
            p = p.lstrip("0")
            if not p or p[0] not in _DIGITS:
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def is_semver(text: str, normalize: bool = False) -> bool:
    """CEL ``isSemver(text)`` / ``isSemver(text, normalize)``."""
    try:
        Semver.parse(text, normalize)
    except SemverError:
        return False
    return True
