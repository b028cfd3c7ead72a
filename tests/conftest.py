"""Shared test helpers: the research fixtures in ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
FIXTURES = SHARED / "research" / "fixtures"


def load_fixture(name: str) -> list[dict]:
    """The items of a ``kubectl get -o yaml`` List in ../shared/research/fixtures."""
    return yaml.safe_load((FIXTURES / name).read_text())["items"]


@pytest.fixture(scope="session")
def fixture_slices() -> list[dict]:
    """The main ResourceSlice fixture (4 GPU nodes, 38 GPU/MIG devices)."""
    return load_fixture("resourceslices.yaml")
