"""Class and request CEL selectors, compiled once and evaluated as the scheduler does.

The scheduler compiles a selector on first use (``cel.Cache.GetOrCompile``) in its stored-expression
environment, so a compile error surfaces only when some device is checked against it; a runtime
error aborts the allocation. Both are reported with the class or claim and the selector's index.

A selector's verdict on a device is pure, so drawb remembers it across calls, keyed by the device
object (held, so its identity stays unique) and checked against its ``attributes``, ``capacity``
and ``allowMultipleAllocations``: a device whose attributes or capacity are replaced is evaluated
again. ``clear_caches`` forgets everything.
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

_CEL_GATES = frozenset(CEL_GATES)


@lru_cache(maxsize=4096)
def _compiled(expression: str, version: str, gates: tuple[tuple[str, bool], ...]) -> Selector | CELCompileError:
    try:
        return compile_selector(expression, kubernetes_version=version, stored=True, feature_gates=dict(gates))
    except CELCompileError as err:
        return err


_CACHE_LIMIT = 500_000
_variables: dict[tuple, tuple[Any, tuple, dict[str, Any]]] = {}
_verdicts: dict[tuple, tuple[Any, tuple, bool | str]] = {}


def _fingerprint(device: Mapping[str, Any]) -> tuple:
    """What CEL reads from a device (held, compared by identity; the flag by value)."""
    return (device.get("attributes"), device.get("capacity"), device.get("allowMultipleAllocations"))


def _same(a: tuple, b: tuple) -> bool:
    return a[0] is b[0] and a[1] is b[1] and a[2] == b[2]


def clear_caches() -> None:
    """Forget remembered device variables and selector verdicts."""
    _variables.clear()
    _verdicts.clear()


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
        key = (id(device), driver, compiled.spec)
        fingerprint = _fingerprint(device)
        cached = _variables.get(key)
        if cached is None or cached[0] is not device or not _same(cached[1], fingerprint):
            if len(_variables) > _CACHE_LIMIT:
                _variables.clear()
            cached = (device, fingerprint, from_json(device, driver, compiled.spec))
            _variables[key] = cached
        return cached[2]

    def _verdict(self, expression: str, device: Mapping[str, Any], driver: str) -> bool | str | CELCompileError:
        compiled = _compiled(expression, self.version, self.gates)
        if isinstance(compiled, CELCompileError):
            return compiled
        key = (id(device), driver, expression, self.version, self.gates)
        fingerprint = _fingerprint(device)
        cached = _verdicts.get(key)
        if cached is not None and cached[0] is device and _same(cached[1], fingerprint):
            return cached[2]
        verdict: bool | str
        try:
            verdict = compiled.evaluate(self._device_variables(device, driver, compiled))
        except CelError as err:
            verdict = enhance_runtime_error(err.message, compiled.spec.minor)
        except RecursionError:
            verdict = "max recursion depth exceeded"
        if len(_verdicts) > _CACHE_LIMIT:
            _verdicts.clear()
        _verdicts[key] = (device, fingerprint, verdict)
        return verdict

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
