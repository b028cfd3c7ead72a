"""Class and request CEL selectors, compiled once and evaluated as the scheduler does.

The scheduler compiles a selector on first use (``cel.Cache.GetOrCompile``) in its stored-expression
environment, so a compile error surfaces only when some device is checked against it; a runtime
error aborts the allocation. Both are reported with the class or claim and the selector's index.

A selector's verdict on a device is pure, so drawb remembers it across calls per device object
(``drawb.memo``), as it remembers the device's CEL variables, stamped with its ``attributes``,
``capacity`` and ``allowMultipleAllocations``: a device whose attributes or capacity are replaced is
evaluated again.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from drawb import versions
from drawb.alloc.errors import AllocationError
from drawb.cel import CELCompileError, Selector, compile_selector
from drawb.cel.env import CEL_GATES
from drawb.cel.device import from_json
from drawb.cel.selector import enhance_runtime_error
from drawb.cel.values import CelError
from drawb.memo import Table

_CEL_GATES = frozenset(CEL_GATES)


@lru_cache(maxsize=4096)
def _compiled(expression: str, version: str, gates: tuple[tuple[str, bool], ...]) -> Selector | CELCompileError:
    try:
        return compile_selector(expression, kubernetes_version=version, stored=True, feature_gates=dict(gates))
    except CELCompileError as err:
        return err


_variables: Table[dict[str, Any]] = Table("device CEL variables", 500_000)  # per device, driver and environment
_verdicts: Table[bool | str] = Table("selector verdicts", 500_000)  # per device, driver, expression, version, gates


def _stamp(device: Mapping[str, Any]) -> tuple:
    """What CEL reads from a device."""
    return (device.get("attributes"), device.get("capacity"), device.get("allowMultipleAllocations"))


@lru_cache(maxsize=256)
def evaluator_for(minor: int, gates: tuple[tuple[str, bool], ...]) -> SelectorEvaluator:
    """The (shared, stateless) evaluator of one Kubernetes version and gate set."""
    return SelectorEvaluator(minor, gates)


class SelectorEvaluator:
    """Evaluates class and request selectors on devices for one Kubernetes version and gate set."""

    def __init__(self, minor: int, gates: tuple[tuple[str, bool], ...]) -> None:
        self.version = f"1.{minor}"
        self.names_device = versions.rules(self.version).has("alloc.errors_name_device")
        self.gates = tuple((g, v) for g, v in gates if g in _CEL_GATES)

    def _device_variables(self, device: Mapping[str, Any], driver: str, compiled: Selector) -> dict[str, Any]:
        part = (driver, compiled.spec)
        stamp = _stamp(device)
        variables = _variables.get(device, part, stamp)
        if variables is None:
            variables = _variables.put(device, from_json(device, driver, compiled.spec), part, stamp)
        return variables

    def _verdict(self, expression: str, device: Mapping[str, Any], driver: str) -> bool | str | CELCompileError:
        compiled = _compiled(expression, self.version, self.gates)
        if isinstance(compiled, CELCompileError):
            return compiled
        part = (driver, expression, self.version, self.gates)
        stamp = _stamp(device)
        cached = _verdicts.get(device, part, stamp)
        if cached is not None:
            return cached
        verdict: bool | str
        try:
            verdict = compiled.evaluate(self._device_variables(device, driver, compiled))
        except CelError as err:
            verdict = enhance_runtime_error(err.message, compiled.spec.minor)
        except RecursionError:
            verdict = "max recursion depth exceeded"
        return _verdicts.put(device, verdict, part, stamp)

    def matches(self, selectors: list, device: Mapping[str, Any], device_id: tuple[str, str, str], owner: str) -> bool:
        """Whether every selector matches; ``owner`` is ``class X`` or ``claim Y`` for error messages."""
        for index, selector in enumerate(selectors):
            verdict = self._verdict((selector.get("cel") or {}).get("expression", ""), device, device_id[0])
            if verdict is True:
                continue
            if verdict is False:
                return False
            if isinstance(verdict, CELCompileError):
                raise AllocationError(f"{owner}: selector #{index}: CEL compile error: {verdict.message}")
            where = f" on device {'/'.join(device_id)}" if self.names_device else ""
            raise AllocationError(f"{owner}: selector #{index}{where}: CEL runtime error: {verdict}")
        return True
