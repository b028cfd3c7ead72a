"""drawb.api.semver against the Kubernetes and blang/semver tables in data/semver_cases.yaml."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from drawb.api.semver import Semver, SemverError, is_semver

CASES = yaml.safe_load((Path(__file__).parent / "data" / "semver_cases.yaml").read_text())


def parts(v: Semver) -> dict:
    return {"major": v.major, "minor": v.minor, "patch": v.patch, "pre": list(v.pre), "build": list(v.build)}


def expected_parts(case: dict) -> dict:
    return {k: case[k] for k in ("major", "minor", "patch", "pre", "build")}


def run_call(call: list):
    name, *args = call
    if name == "parse":
        return Semver.parse(args[0])
    if name == "is_semver":
        return is_semver(args[0])
    if name == "is_semver_normalize":
        return is_semver(args[0], normalize=True)
    if name == "eq_normalized":
        return Semver.parse(args[0], normalize=True) == Semver.parse(args[1])
    a = Semver.parse(args[0])
    if name in ("major", "minor", "patch"):
        return getattr(a, name)
    b = Semver.parse(args[1])
    if name == "eq":
        return a == b
    return getattr(a, name)(b)


@pytest.mark.parametrize("case", CASES["cel"], ids=[c["name"] for c in CASES["cel"]])
def test_cel_library(case):
    if "error" in case:
        with pytest.raises(SemverError) as err:
            run_call(case["call"])
        assert str(err.value) == case["error"]
        return
    got, want = run_call(case["call"]), case["expect"]
    if isinstance(want, dict):
        assert isinstance(got, Semver) and str(got) == want["semver"]
    else:
        assert type(got) is type(want) and got == want


@pytest.mark.parametrize("case", CASES["format"], ids=[c["in"] for c in CASES["format"]])
def test_format(case):
    v = Semver.parse(case["in"])
    assert parts(v) == expected_parts(case)
    assert str(v) == case["in"]
    assert is_semver(case["in"])


@pytest.mark.parametrize("case", CASES["tolerant"], ids=[repr(c["in"]) for c in CASES["tolerant"]])
def test_tolerant(case):
    if "error" in case:
        with pytest.raises(SemverError) as err:
            Semver.parse(case["in"], normalize=True)
        assert str(err.value) == case["error"]
        return
    assert parts(Semver.parse(case["in"], normalize=True)) == expected_parts(case)
    assert is_semver(case["in"], normalize=True)


@pytest.mark.parametrize("case", CASES["compare"], ids=[f"{a} vs {b}" for a, b, _ in CASES["compare"]])
def test_compare(case):
    a, b, result = Semver.parse(case[0]), Semver.parse(case[1]), case[2]
    assert a.compare_to(b) == result
    assert b.compare_to(a) == -result
    assert (a == b) == (result == 0)
    assert a.is_greater_than(b) == (result == 1)
    assert a.is_less_than(b) == (result == -1)


@pytest.mark.parametrize("case", CASES["wrong_format"], ids=[repr(c["in"]) for c in CASES["wrong_format"]])
def test_wrong_format(case):
    with pytest.raises(SemverError) as err:
        Semver.parse(case["in"])
    assert str(err.value) == case["error"]
    assert not is_semver(case["in"])


@pytest.mark.parametrize("case", CASES["wrong_tolerant"], ids=[c["in"] for c in CASES["wrong_tolerant"]])
def test_wrong_tolerant(case):
    with pytest.raises(SemverError) as err:
        Semver.parse(case["in"], normalize=True)
    assert str(err.value) == case["error"]
    assert not is_semver(case["in"], normalize=True)


def test_compare_helper():
    v, v1 = Semver.parse(CASES["compare_helper"]["v"]), Semver.parse(CASES["compare_helper"]["v1"])
    same = Semver.parse(CASES["compare_helper"]["v"])
    assert v == same and v1 != v and v >= same and v <= same
    assert v < v1 and v <= v1 and v1 > v and v1 >= v


def test_build_metadata_ignored_by_equality_and_hash():
    a, b = Semver.parse("1.0.0+build.1"), Semver.parse("1.0.0+other")
    assert a == b and hash(a) == hash(b) and str(a) != str(b)


def test_immutable_and_picklable():
    v = Semver.parse("1.2.3-rc.1+b")
    with pytest.raises(AttributeError):
        v.major = 2  # type: ignore[misc]
    assert str(pickle.loads(pickle.dumps(v))) == "1.2.3-rc.1+b"
    assert Semver("v1.2", normalize=True) == Semver("1.2.0")


def test_go_quoting_in_messages():
    with pytest.raises(SemverError, match=r'prerelease "\\t"'):
        Semver.parse("1.2.3-\t")


identifier = st.from_regex(r"[0-9A-Za-z-]{1,6}", fullmatch=True).filter(lambda s: not (s.isdigit() and len(s) > 1 and s[0] == "0"))
numbers = st.integers(min_value=0, max_value=2**64 - 1)
versions = st.builds(
    lambda ma, mi, pa, pre, build: f"{ma}.{mi}.{pa}" + ("-" + ".".join(pre) if pre else "") + ("+" + ".".join(build) if build else ""),
    numbers, numbers, numbers, st.lists(identifier, max_size=3), st.lists(identifier, max_size=2),
)


@given(versions)
def test_round_trip(text):
    v = Semver.parse(text)
    assert str(v) == text
    assert Semver.parse(str(v)) == v


@given(versions, versions)
def test_order_is_antisymmetric(a, b):
    va, vb = Semver.parse(a), Semver.parse(b)
    assert va.compare_to(vb) == -vb.compare_to(va)
    if va == vb:
        assert hash(va) == hash(vb)
