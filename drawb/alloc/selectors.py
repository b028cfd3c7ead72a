"""Class and request CEL selectors, compiled once and evaluated as the scheduler does.

The scheduler compiles a selector on first use (``cel.Cache.GetOrCompile``) in its stored-expression
environment, so a compile error surfaces only when some device is checked against it; a runtime
error aborts the allocation. Both are reported with the class or claim and the selector's index.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from drawb.alloc.errors import AllocationError
from drawb.cel import CELCompileError, Selector, compile_selector
from drawb.cel.env import GATE_DEFAULTS
from drawb.cel.device import from_json
from drawb.cel.values import CelError

_CEL_GATES = frozenset(GATE_DEFAULTS)


@lru_cache(maxsize=4096)
def _compiled(expression: str, version: str, gates: tuple[tuple[str, bool], ...]) -> Selector | CELCompileError:
    try:
        return compile_selector(expression, kubernetes_version=version, stored=True, feature_gates=dict(gates))
    except CELCompileError as err:
        return err


class SelectorEvaluator:
    """Evaluates selectors for one allocation attempt; device variables are built once per device."""

    def __init__(self, minor: int, gates: tuple[tuple[str, bool], ...]) -> None:
        self.version = f"1.{minor}"
        self.gates = tuple((g, v) for g, v in gates if g in _CEL_GATES)
        self._variables: dict[int, tuple[Any, dict[str, Any]]] = {}

    def _device_variables(self, device: Mapping[str, Any], driver: str, spec: Any) -> dict[str, Any]:
        key = id(device)
        cached = self._variables.get(key)
        if cached is None or cached[0] is not device:
            cached = (device, from_json(device, driver, spec))
            self._variables[key] = cached
        return cached[1]

    def matches(self, selectors: list, device: Mapping[str, Any], driver: str, owner: str) -> bool:
        """Whether every selector matches; ``owner`` is ``class X`` or ``claim Y`` for error messages."""
        for index, selector in enumerate(selectors):
            expression = (selector.get("cel") or {}).get("expression", "")
            compiled = _compiled(expression, self.version, self.gates)
            if isinstance(compiled, CELCompileError):
                raise AllocationError(f"{owner}: selector #{index}: CEL compile error: {compiled.message}")
            try:
                variables = self._device_variables(device, driver, compiled.spec)
                matched = compiled.evaluate(variables)
            except CelError as err:
                message = _runtime_message(err.message, compiled)
                raise AllocationError(f"{owner}: selector #{index}: CEL runtime error: {message}") from None
            except RecursionError:
                raise AllocationError(f"{owner}: selector #{index}: CEL runtime error: max recursion depth exceeded") from None
            if not matched:
                return False
        return True


def _runtime_message(message: str, compiled: Selector) -> str:
    from drawb.cel.selector import enhance_runtime_error

    return enhance_runtime_error(message, compiled.spec.minor)
