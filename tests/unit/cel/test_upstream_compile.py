"""Kubernetes' own DRA CEL tests (dynamic-resource-allocation cel/compile_test.go) as data."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from drawb.cel import CELCompileError, CELEvalError, compile_selector, select

from .helpers import device, frame_of, resource_slice

DATA = yaml.safe_load((Path(__file__).parent / "data" / "compile_cases.yaml").read_text())


def _params(table: str) -> list:
    return [
        pytest.param(case, version, id=f"{case['name']}@{version}")
        for case in DATA[table]
        for version in case["versions"]
    ]


def _device(case: dict) -> dict:
    return device(
        attributes=case.get("attributes"),
        capacity=case.get("capacity"),
        allow_multiple_allocations=case.get("allow_multiple_allocations"),
    )


def _compile(case: dict, version: str):
    return compile_selector(
        case["expression"],
        kubernetes_version=version,
        stored=case.get("env", "stored") == "stored",
        feature_gates=case.get("gates"),
    )


def _check(case: dict, version: str) -> None:
    if "compile_error" in case:
        with pytest.raises(CELCompileError) as info:
            _compile(case, version)
        assert case["compile_error"] in str(info.value)
        return
    selector = _compile(case, version)
    if "cost" in case:
        assert selector.estimated_cost == case["cost"]
    dev = _device(case)
    driver = case.get("driver", "")
    if "match_error" in case:
        with pytest.raises(CELEvalError) as info:
            selector.matches(dev, driver)
        assert case["match_error"] in str(info.value)
    else:
        assert selector.matches(dev, driver) is case["match"]


@pytest.mark.parametrize(("case", "version"), _params("test_cel"))
def test_cel(case: dict, version: str) -> None:
    _check(case, version)


@pytest.mark.parametrize(("case", "version"), _params("test_cel_feature_combinations"))
def test_cel_feature_combinations(case: dict, version: str) -> None:
    _check(case, version)


@pytest.mark.parametrize(("case", "version"), [p for p in _params("test_cel") if "compile_error" not in p.values[0]])
def test_cel_vectorized_agrees(case: dict, version: str) -> None:
    """The same cases through `select` on an inventory frame: the same match or the same error."""
    selector = _compile(case, version)
    driver = case.get("driver", "")
    frame = frame_of([resource_slice([_device(case)], driver or "dra.example.com")])
    if not driver:
        frame["driver"] = frame["driver"].str.replace("dra.example.com", "", regex=False)
    result = select(frame, selector)
    try:
        expected = selector.matches(_device(case), driver)
        assert result.match_count == int(expected) and result.error_count == 0
    except CELEvalError as err:
        assert list(result.errors["error"]) == [str(err)]
