"""The attributes a selector reads, found in its checked tree, and whether it tests for them."""

from __future__ import annotations

import pytest

from drawb.cel import compile_selector
from drawb.cel.reads import attribute_reads


def _reads(expression: str) -> list[tuple[str, bool]]:
    return [(r.qualified, r.guarded) for r in attribute_reads(compile_selector(expression).ast.root)]


@pytest.mark.parametrize("expression, expected", [
    ("device.attributes['gpu.nvidia.com'].index == 0 && device.attributes['gpu.nvidia.com'].type == 'gpu'",
     [("gpu.nvidia.com/index", False), ("gpu.nvidia.com/type", False)]),
    ("device.attributes['gpu.nvidia.com']['minor'] < 4", [("gpu.nvidia.com/minor", False)]),
    ("has(device.attributes['gpu.nvidia.com'].index) && device.attributes['gpu.nvidia.com'].index < 2",
     [("gpu.nvidia.com/index", True)]),
    ("'minor' in device.attributes['gpu.nvidia.com']", [("gpu.nvidia.com/minor", True)]),
    ("device.attributes['resource.kubernetes.io'].pciBusID.startsWith('0000:1b')",
     [("resource.kubernetes.io/pciBusID", False)]),
    ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", []),
    ("device.driver == 'gpu.nvidia.com'", []),
])
def test_reads_and_presence_tests_are_found(expression, expected):
    assert _reads(expression) == expected
