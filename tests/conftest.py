"""Shared test helpers: the fixtures and captures in tests/data."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

DATA = Path(__file__).resolve().parent / "data"
FIXTURES = DATA / "fixtures"
CAPTURES = DATA / "captures"


def load_fixture(name: str) -> list[dict]:
    """The items of a ``kubectl get -o yaml`` List in tests/data/fixtures."""
    return yaml.safe_load((FIXTURES / name).read_text())["items"]


@pytest.fixture(scope="session")
def fixture_slices() -> list[dict]:
    """The main ResourceSlice fixture (4 GPU nodes, 38 GPU/MIG devices)."""
    return load_fixture("resourceslices.yaml")
