"""The apiserver CEL quantity and semver library tests, evaluated in drawb's DRA environment."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from drawb.api.quantity import Quantity
from drawb.api.semver import Semver
from drawb.cel.selector import CELCompileError, evaluate_expression
from drawb.cel.values import CelError, QuantityValue, SemverValue

DATA = yaml.safe_load((Path(__file__).parent / "data" / "library_cases.yaml").read_text())
CASES = [
    pytest.param(case, version, id=f"{library}/{case['name']}@{version}")
    for library in ("quantity", "semver")
    for case in DATA[library]
    for version in DATA["versions"]
]


def _expected(value):
    if isinstance(value, str) and value.startswith("quantity:"):
        return QuantityValue(Quantity.parse(value.removeprefix("quantity:")))
    if isinstance(value, str) and value.startswith("semver:"):
        return SemverValue(Semver.parse(value.removeprefix("semver:")))
    return value


@pytest.mark.parametrize(("case", "version"), CASES)
def test_library(case: dict, version: str) -> None:
    if "compile_error" in case:
        with pytest.raises(CELCompileError) as info:
            evaluate_expression(case["expr"], kubernetes_version=version)
        assert re.search(case["compile_error"], str(info.value))
        return
    if "runtime_error" in case:
        with pytest.raises(CelError) as info:
            evaluate_expression(case["expr"], kubernetes_version=version)
        assert re.search(case["runtime_error"], info.value.message)
        return
    got = evaluate_expression(case["expr"], kubernetes_version=version)
    want = _expected(case["value"])
    if isinstance(want, QuantityValue):
        assert isinstance(got, QuantityValue) and got.q.compare_to(want.q) == 0 and str(got.q) == str(want.q)
    elif isinstance(want, SemverValue):
        assert isinstance(got, SemverValue) and str(got.v) == str(want.v)
    else:
        assert type(got) is type(want) and got == want
