"""Compile one DRA CEL device selector as the API server does, and match devices as the scheduler does.

The compile errors (`CELCompileError`) and evaluation errors (`CELEvalError`) are declared here;
the checks themselves are in `diagnostics`, `validators` and `rewrite` (see the package docstring).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Mapping

from drawb import versions
from drawb.cel.ast import CheckedAst, Type, decode_checked, go_type_string
from drawb.cel.device import from_json
from drawb.cel.diagnostics import format_issue, issues_text
from drawb.cel.env import checker_env, env_spec
from drawb.cel.interp import COST_LIMIT, Compiler, Ctx
from drawb.cel.rewrite import nesting_depth, presence_of_device_fields
from drawb.cel.spec import EnvSpec
from drawb.cel.validators import constant_regex_error, extra_issues
from drawb.cel.values import CelError, type_name
from drawb.errors import DrawbError

MAX_EXPRESSION_BYTES = 10 * 1024
MAX_COST = 1_000_000
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() "
    "for optional fields"
)
# The scheduler adds the hint from Kubernetes 1.37 on (k8s.io/dynamic-resource-allocation/cel's
# EnhanceRuntimeError, first in v0.37.0; v0.34.x-v0.36.x report the bare "no such key: x"):
# drawb.versions' behaviour "cel.no_such_key_hint".
_NEWEST = versions.rules(versions.newest()).number


class CELCompileError(DrawbError, ValueError):
    """The API server would reject the expression; `str()` is its detail text."""

    def __init__(self, message: str, expression: str, reason: str) -> None:
        super().__init__(message)
        self.message = message
        self.expression = expression
        self.reason = reason  # "syntax", "type", "length", "cost", "result"


class CELEvalError(DrawbError, RuntimeError):
    """Evaluating the selector on a device fails in the scheduler (the allocation attempt aborts)."""

    def __init__(self, message: str, minor: int = _NEWEST) -> None:
        super().__init__(enhance_runtime_error(message, minor))
        self.raw = message


def enhance_runtime_error(message: str, minor: int = _NEWEST) -> str:
    """The message as the scheduler of Kubernetes 1.`minor` reports it: 1.37+ hints at `.?`/`has()`
    for missing keys (idempotent); earlier versions report it unchanged."""
    if "no such key:" in message and NO_SUCH_KEY_HINT not in message and _hints(minor):
        return message + NO_SUCH_KEY_HINT
    return message


@functools.lru_cache(maxsize=None)
def _hints(minor: int) -> bool:
    return versions.rules(f"1.{minor}").has("cel.no_such_key_hint")


def result_to_bool(value: Any) -> bool:
    """DeviceMatches' final conversion of the CEL result."""
    if type(value) is bool:
        return value
    name = type_name(value)
    label = {"string": "'string'", "int": "'int'", "double": "Double", "bytes": "Bytes", "uint": "'uint'",
             "list": "list", "map": "map", "null_type": "'null_type'"}.get(name, f"'{name}'")  # fmt: skip
    raise CelError(f"CEL result of type {name} could not be converted to bool: type conversion error from {label} to 'bool'")


# --- the compiled selector ------------------------------------------------------------------


@dataclass
class Selector:
    """A compiled selector: `matches(device, driver)` evaluates it like the scheduler."""

    expression: str
    spec: EnvSpec
    ast: CheckedAst
    output_type: Type
    cost: int | None = None
    _program: Any = field(default=None, repr=False)

    def __repr__(self) -> str:
        env = "scheduler" if self.spec.stored else "API server"
        return f"<Selector {self.expression!r} ({env}, Kubernetes 1.{self.spec.minor})>"

    @property
    def kubernetes_version(self) -> str:
        """The Kubernetes version whose environment compiled the selector."""
        return f"1.{self.spec.minor}"

    @property
    def estimated_cost(self) -> int:
        """The API server's worst-case cost estimate (the scheduler itself skips estimation)."""
        if self.cost is None:
            from drawb.cel.cost import estimate

            self.cost = estimate(self.ast, self.spec)
        return self.cost

    def program(self) -> Any:
        """The interpreter closure of the selector (built on first use)."""
        if self._program is None:
            self._program = Compiler(self.spec).compile(self.ast.root)
        return self._program

    def evaluate(self, variables: dict[str, Any], limit: int = COST_LIMIT) -> bool:
        """Run on prepared `device` variables; raises CelError (raw cel-go message)."""
        return result_to_bool(self.program()(Ctx(variables, limit)))

    def matches(self, device: Mapping[str, Any], driver: str) -> bool:
        """Whether the scheduler would select `device` (one `spec.devices` entry); CELEvalError on errors."""
        try:
            return self.evaluate(from_json(device, driver, self.spec))
        except CelError as err:
            raise CELEvalError(err.message, self.spec.minor) from None
        except RecursionError:
            raise CELEvalError("max recursion depth exceeded", self.spec.minor) from None


def compile_selector(
    expression: str,
    *,
    kubernetes_version: str = versions.DEFAULT,
    stored: bool = False,
    feature_gates: Mapping[str, bool] | None = None,
) -> Selector:
    """Compile like the API server (`stored=False`) or the scheduler (`stored=True`); CELCompileError if rejected."""
    spec = env_spec(kubernetes_version, stored, feature_gates)
    if not isinstance(expression, str):
        raise TypeError(f"expression must be a str, not {type(expression).__name__}")
    if len(expression.encode("utf-8")) > MAX_EXPRESSION_BYTES and not stored:
        raise CELCompileError(f"may not be more than {MAX_EXPRESSION_BYTES} bytes", expression, "length")  # field.TooLong
    return _compile(expression, spec)


def evaluate_expression(
    expression: str,
    *,
    kubernetes_version: str = versions.DEFAULT,
    stored: bool = True,
    feature_gates: Mapping[str, bool] | None = None,
    device: Mapping[str, Any] | None = None,
    driver: str = "",
) -> Any:
    """Evaluate any expression of the DRA environment to its CEL value (no bool requirement); CelError on errors."""
    spec = env_spec(kubernetes_version, stored, feature_gates)
    ast = _check(expression, spec)
    variables = from_json(device or {}, driver, spec)
    return Compiler(spec).compile(ast.root)(Ctx(variables))


CEL_GO_MAX_NESTING = 250  # cel-go's parser recursion limit; the C++ parser stops at 32


def _recursion_error(expression: str) -> None:
    """Nesting beyond the C++ parser's limit: cel-go's error past 250, else say drawb cannot check it."""
    deepest = nesting_depth(expression)
    if deepest > CEL_GO_MAX_NESTING:
        # cel-go reports this one without a location
        message = f"ERROR: <input>:-1:0: expression recursion limit exceeded: {CEL_GO_MAX_NESTING}"
        raise CELCompileError("compilation failed: " + message, expression, "syntax")
    raise CELCompileError(
        f"drawb cannot check expressions nested {deepest} levels deep (its checker stops at 32; the API server "
        f"allows {CEL_GO_MAX_NESTING}): flatten the expression to preview it",
        expression,
        "unsupported",
    )


def _check(expression: str, spec: EnvSpec) -> CheckedAst:
    env = checker_env(spec)
    try:
        source = presence_of_device_fields(expression, spec)
        checked = env.compile(source)
    except RuntimeError as err:
        if "recursion limit exceeded" in str(err):
            _recursion_error(expression)
        try:
            parsed = decode_checked(env.compile(source, disable_check=True).serialize())
        except RuntimeError:
            parsed = None
        text = issues_text(str(err), expression, parsed)
        reason = "syntax" if "Syntax error" in text else "type"
        raise CELCompileError("compilation failed: " + text, expression, reason) from None
    ast = decode_checked(checked.serialize())
    issues = extra_issues(ast, expression)
    if issues:
        text = "\n".join(format_issue(expression, offset, message) for offset, message in issues)
        raise CELCompileError("compilation failed: " + text, expression, "type")
    regex_error = constant_regex_error(ast)
    if regex_error is not None:
        raise CELCompileError(f"program instantiation failed: {regex_error}", expression, "program")
    return ast


def _compile(expression: str, spec: EnvSpec) -> Selector:
    from drawb.cel.cost import estimate

    ast = _check(expression, spec)
    out = ast.root.type
    if not (out.kind == "bool" or out.kind == spec.attribute_type):
        raise CELCompileError(
            f"must evaluate to bool or the unknown type, not {go_type_string(out)}", expression, "result"
        )
    selector = Selector(expression, spec, ast, out)
    if not spec.stored:
        selector.cost = estimate(ast, spec)
        if selector.cost > MAX_COST:
            raise CELCompileError("too complex, exceeds cost limit", expression, "cost")
    return selector
