"""The "no such key" runtime error as each scheduler version words it.

Found by tests/live/test_cel_scheduler_differential.py: the 1.34 scheduler reports
`claim ns/c: selector #0: CEL runtime error: no such key: profile`; drawb appended the hint
(". consider using CEL optional chaining ...") that k8s.io/dynamic-resource-allocation/cel's
EnhanceRuntimeError adds only from v0.37.0 (Kubernetes 1.37) on.
"""

from __future__ import annotations

import pytest

from drawb.cel import CELEvalError, compile_selector, select
from drawb.cel.selector import NO_SUCH_KEY_HINT, enhance_runtime_error
from drawb.cluster.sim.scenarios import build_scenario
from drawb.inventory import device_frame

EXPRESSION = "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
GPU_CLASS = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
FULL_GPU = {"name": "gpu-0", "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA H200"}},
            "capacity": {"memory": {"value": "143771Mi"}}}


@pytest.mark.parametrize(("version", "message"), [
    ("1.34", "no such key: profile"),
    ("1.35", "no such key: profile"),
    ("1.36", "no such key: profile"),
    ("1.37", "no such key: profile" + NO_SUCH_KEY_HINT),
])
def test_missing_key_error_has_the_hint_only_from_1_37(version, message):
    selector = compile_selector(EXPRESSION, kubernetes_version=version, stored=True)
    with pytest.raises(CELEvalError) as info:
        selector.matches(FULL_GPU, "gpu.nvidia.com")
    assert str(info.value) == message and info.value.raw == "no such key: profile"

    frame = device_frame(build_scenario("default").resource_slices)
    result = select(frame, EXPRESSION, kubernetes_version=version, stored=True,
                    class_selectors=[GPU_CLASS])
    assert result.error_count == 24  # every full GPU; MIG devices stop at the class selector
    assert set(result.errors["error"]) == {message}


def test_hint_is_idempotent_and_only_for_missing_keys():
    once = enhance_runtime_error("no such key: x", 37)
    assert enhance_runtime_error(once, 37) == once == "no such key: x" + NO_SUCH_KEY_HINT
    assert enhance_runtime_error("division by zero", 37) == "division by zero"
    assert enhance_runtime_error("no such key: x", 34) == "no such key: x"
