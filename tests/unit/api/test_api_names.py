"""drawb.api.names against the Kubernetes validation tables in data/names_cases.yaml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from drawb.api import names

CASES = yaml.safe_load((Path(__file__).parent / "data" / "names_cases.yaml").read_text())
MESSAGES = CASES["messages"]
FUNCTIONS = ["dns1123_label", "dns1123_subdomain", "dns1035_label", "c_identifier", "qualified_name", "label_value"]


def expand(text: str) -> str:
    """Replace $NAME references with the shared message texts."""
    return re.sub(r"\$[A-Z][A-Z0-9_]*", lambda m: MESSAGES[m.group(0)], text)


def short(value: str) -> str:
    return repr(value if len(value) < 24 else f"{value[:10]}…({len(value)})")


@pytest.mark.parametrize(
    "fn,value", [(fn, v) for fn in FUNCTIONS for v in CASES[fn]["valid"]], ids=lambda x: short(x) if isinstance(x, str) else x
)
def test_valid(fn, value):
    assert getattr(names, f"is_{fn}")(value) == []


@pytest.mark.parametrize(
    "fn,case", [(fn, c) for fn in FUNCTIONS for c in CASES[fn]["invalid"]], ids=lambda x: short(x["in"]) if isinstance(x, dict) else x
)
def test_invalid(fn, case):
    assert getattr(names, f"is_{fn}")(case["in"]) == [expand(e) for e in case["errors"]]


def run_dra(case: dict) -> list[str]:
    check, value, path = case["check"], case["in"], case["path"]
    if check == "attribute_key":
        return names.validate_qualified_name(value, names.field_key(path, value))
    return getattr(names, f"validate_{check}")(value, path)


@pytest.mark.parametrize("case", CASES["dra"], ids=[f"{c['name']}:{short(c['in'])}" for c in CASES["dra"]])
def test_dra(case):
    assert run_dra(case) == [expand(e) for e in case["errors"]]


def test_driver_name_is_lower_cased_before_the_subdomain_check():
    assert names.validate_driver_name("GPU.Example.COM") == []
    assert names.validate_driver_name("") == [
        "spec.driver: Required value",
        'spec.driver: Invalid value: "": ' + MESSAGES["$SUBDOMAIN"],
    ]


def test_qualified_name_with_two_slashes_passes_like_kubernetes_1_34():
    assert names.validate_qualified_name("a.com/b/c", "k") == []


def test_lengths_count_utf8_bytes():
    assert names.is_dns1123_label("é" * 32)[0] == "must be no more than 63 characters"


def test_go_anchors_are_not_python_dollar():
    assert names.is_dns1123_label("abc\n") != []
    assert names.is_c_identifier("abc\n") != []


labels = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)


@given(st.lists(labels, min_size=1, max_size=5))
def test_generated_subdomains_are_valid(parts):
    value = ".".join(parts)
    assert names.is_dns1123_subdomain(value) == []
    assert (names.is_dns1123_label(value) == []) == (len(parts) == 1)


@given(st.text(max_size=80))
def test_c_identifier_matches_its_definition(value):
    ok = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) is not None
    assert (names.is_c_identifier(value) == []) == ok


version_like = st.text(alphabet="0123456789.-+aZ", max_size=20)


@given(version_like)
def test_version_value_syntax_agrees_with_strict_semver(value):
    from drawb.api.semver import is_semver

    assert (names.validate_version_value(value, "v") == []) == is_semver(value)
