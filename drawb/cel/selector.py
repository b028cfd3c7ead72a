"""Compile a DRA CEL device selector as the API server does, and match devices as the scheduler does."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from drawb.api.quantity import Quantity, QuantityError
from drawb.api.semver import Semver, SemverError
from drawb.cel.ast import CheckedAst, Node, Type, decode_checked
from drawb.cel.env import EnvSpec, checker_env, env_spec
from drawb.cel.interp import COST_LIMIT, Compiler, Ctx
from drawb.cel.values import CelError, DefaultMap, QuantityValue, SemverValue, type_name

MAX_EXPRESSION_BYTES = 10 * 1024
MAX_COST = 1_000_000
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() "
    "for optional fields"
)


class CELCompileError(ValueError):
    """The API server would reject the expression; `str()` is its detail text."""

    def __init__(self, message: str, expression: str, reason: str) -> None:
        super().__init__(message)
        self.message = message
        self.expression = expression
        self.reason = reason  # "syntax", "type", "length", "cost", "result"


class CELEvalError(RuntimeError):
    """Evaluating the selector on a device fails in the scheduler (the allocation attempt aborts)."""

    def __init__(self, message: str) -> None:
        super().__init__(enhance_runtime_error(message))
        self.raw = message


def enhance_runtime_error(message: str) -> str:
    """The scheduler's hint for missing keys (idempotent)."""
    if "no such key:" in message and NO_SUCH_KEY_HINT not in message:
        return message + NO_SUCH_KEY_HINT
    return message


_CPP_PREFIX = re.compile(r"^[A-Z_]+: ")
_CPP_SUFFIX = re.compile(r" \[[A-Z_]+\]$")
_DEVICE_FIELD = re.compile(r"undeclared reference to 'device\.([A-Za-z_][A-Za-z0-9_]*)' \(in container ''\)")
_DEVICE_ROOT = re.compile(r"undeclared reference to 'device' \(in container ''\)")


def _issues_text(raw: str) -> str:
    """The C++ checker's status text as cel-go's `Issues.String()`."""
    text = _CPP_SUFFIX.sub("", _CPP_PREFIX.sub("", raw.strip()))
    text = _DEVICE_FIELD.sub(lambda m: f"undefined field '{m.group(1)}'", text)
    # cel-go does not report follow-up errors on operands whose type is already an error.
    issues = [i for i in re.split(r"\n(?=ERROR: )", text) if "'*error*'" not in i]
    return "\n".join(issues)


def _location(ast_or_text: str, offset: int) -> tuple[int, int]:
    line = ast_or_text.count("\n", 0, offset) + 1
    col = offset - (ast_or_text.rfind("\n", 0, offset) + 1)
    return line, col


def format_issue(expression: str, offset: int, message: str) -> str:
    """cel-go's issue format: `ERROR: <input>:L:C: msg` plus the source line and a caret."""
    line, col = _location(expression, offset)
    source = expression.split("\n")[line - 1]
    caret = "." * col + "^"
    out = f"ERROR: <input>:{line}:{col + 1}: {message}"
    if source.strip():
        out += f"\n | {source}\n | {caret}"
    return out


# --- static checks the C++ checker does not make --------------------------------------------


def _assignable(previous: Type, current: Type) -> bool:
    if previous == current:
        return True
    if previous.kind in ("dyn", "any", "error", "param") or current.kind in ("dyn", "any", "error", "param"):
        return True
    if previous.kind == current.kind and previous.kind in ("list", "map", "opaque", "type"):
        return previous.name == current.name and len(previous.params) == len(current.params) and all(
            _assignable(a, b) for a, b in zip(previous.params, current.params)
        )
    if "null" in (previous.kind, current.kind):
        other = current if previous.kind == "null" else previous
        return other.kind in ("message", "wrapper", "opaque", "null")
    return False


def _homogeneous_errors(ast: CheckedAst, expression: str) -> list[str]:
    """cel.HomogeneousAggregateLiterals: list elements, map keys and map values share one type."""
    issues: list[tuple[int, str]] = []

    def elem_type(node: Node, optional: bool) -> Type:
        t = node.type
        if optional and t.kind == "opaque" and t.name == "optional_type" and t.params:
            return t.params[0]
        return t

    def join(nodes: list[tuple[Node, bool]]) -> None:
        previous: Type | None = None
        for node, optional in nodes:
            current = elem_type(node, optional)
            if previous is None:
                previous = current
                continue
            if _assignable(previous, current):
                if previous.kind in ("dyn", "any") or previous.kind == "null":
                    previous = current if previous.kind == "null" else previous
                continue
            issues.append((ast.positions.get(node.id, 0), f"expected type '{previous}' but found '{current}'"))
            return

    stack = [ast.root]
    while stack:
        node = stack.pop()
        if node.kind == "list":
            optional = set(node.optional_indices)
            join([(a, i in optional) for i, a in enumerate(node.args)])
        elif node.kind == "map":
            join([(k, False) for k, _v, _o in node.entries])
            join([(v, o) for _k, v, o in node.entries])
        stack.extend(node.children())
    issues.sort()
    return [format_issue(expression, off, msg) for off, msg in issues]


# --- devices --------------------------------------------------------------------------------


def split_name(name: str, driver: str) -> tuple[str, str]:
    """A qualified name's (domain, id): split at the first `/`, unqualified names in the driver's domain."""
    domain, sep, ident = name.partition("/")
    if not sep:
        return driver, name
    return domain, ident


_VERSIONS: dict[str, SemverValue | CelError] = {}


def _parse_version(text: str) -> SemverValue:
    """A `version` attribute value, parsed strictly (memoized: inventories repeat few versions)."""
    parsed = _VERSIONS.get(text)
    if parsed is None:
        try:
            parsed = SemverValue(Semver.parse(text))
        except SemverError as err:
            parsed = CelError(f"parse semantic version: {err}")
        if len(_VERSIONS) > 65536:
            _VERSIONS.clear()
        _VERSIONS[text] = parsed
    if isinstance(parsed, CelError):
        raise CelError(parsed.message)
    return parsed


def attribute_value(attr: Mapping[str, Any], spec: EnvSpec) -> Any:
    """One `DeviceAttribute` (JSON) as the scheduler converts it; CelError on unsupported values."""
    if spec.convert_list_attributes:
        for key in ("ints", "bools", "strings"):
            if attr.get(key) is not None:
                return list(attr[key])
        if attr.get("versions") is not None:
            return [_parse_version(v) for v in attr["versions"]]
    if attr.get("int") is not None:
        return int(attr["int"])
    if attr.get("bool") is not None:
        return bool(attr["bool"])
    if attr.get("string") is not None:
        return str(attr["string"])
    if attr.get("version") is not None:
        return _parse_version(attr["version"])
    raise CelError("unsupported attribute value")


def device_variables(device: Mapping[str, Any], driver: str, spec: EnvSpec) -> dict[str, Any]:
    """The `device` variable for one ResourceSlice device entry (raises CelError like DeviceMatches)."""
    attributes: DefaultMap = DefaultMap()
    for name, attr in (device.get("attributes") or {}).items():
        try:
            value = attribute_value(attr, spec)
        except CelError as err:
            raise CelError(f"attribute {name}: {err.message}") from None
        domain, ident = split_name(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: DefaultMap = DefaultMap()
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = split_name(name, driver)
        text = cap.get("value") if isinstance(cap, Mapping) else cap
        try:
            q = text if isinstance(text, Quantity) else Quantity.parse(str(text))
        except QuantityError as err:
            raise CelError(f"capacity {name}: {err}") from None
        capacity.setdefault(domain, {})[ident] = QuantityValue(q)
    return {
        "device.driver": driver,
        "device.attributes": attributes,
        "device.capacity": capacity,
        "device.allowMultipleAllocations": bool(device.get("allowMultipleAllocations") or False),
    }


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

    @property
    def kubernetes_version(self) -> str:
        return f"1.{self.spec.minor}"

    @property
    def estimated_cost(self) -> int:
        """The API server's worst-case cost estimate (the scheduler itself skips estimation)."""
        if self.cost is None:
            from drawb.cel.cost import estimate

            self.cost = estimate(self.ast, self.spec)
        return self.cost

    def program(self) -> Any:
        if self._program is None:
            self._program = Compiler(self.spec).compile(self.ast.root)
        return self._program

    def evaluate(self, variables: dict[str, Any], limit: int = COST_LIMIT) -> bool:
        """Run on prepared `device` variables; raises CelError (raw cel-go message)."""
        return result_to_bool(self.program()(Ctx(variables, limit)))

    def matches(self, device: Mapping[str, Any], driver: str) -> bool:
        """Whether the scheduler would select `device` (one `spec.devices` entry); CELEvalError on errors."""
        try:
            return self.evaluate(device_variables(device, driver, self.spec))
        except CelError as err:
            raise CELEvalError(err.message) from None
        except RecursionError:
            raise CELEvalError("max recursion depth exceeded") from None


def compile_selector(
    expression: str,
    *,
    kubernetes_version: str = "1.34",
    stored: bool = False,
    feature_gates: Mapping[str, bool] | None = None,
) -> Selector:
    """Compile like the API server (`stored=False`) or the scheduler (`stored=True`); CELCompileError if rejected."""
    spec = env_spec(kubernetes_version, stored, feature_gates)
    if not isinstance(expression, str):
        raise TypeError(f"expression must be a str, not {type(expression).__name__}")
    if len(expression.encode("utf-8")) > MAX_EXPRESSION_BYTES and not stored:
        raise CELCompileError(f"must have at most {MAX_EXPRESSION_BYTES} bytes", expression, "length")
    return _compile(expression, spec)


def evaluate_expression(
    expression: str,
    *,
    kubernetes_version: str = "1.34",
    stored: bool = True,
    feature_gates: Mapping[str, bool] | None = None,
    device: Mapping[str, Any] | None = None,
    driver: str = "",
) -> Any:
    """Evaluate any expression of the DRA environment to its CEL value (no bool requirement); CelError on errors."""
    spec = env_spec(kubernetes_version, stored, feature_gates)
    ast = _check(expression, spec)
    variables = device_variables(device or {}, driver, spec)
    return Compiler(spec).compile(ast.root)(Ctx(variables))


def _check(expression: str, spec: EnvSpec) -> CheckedAst:
    env = checker_env(spec)
    try:
        checked = env.compile(expression)
    except RuntimeError as err:
        text = _issues_text(str(err))
        reason = "syntax" if "Syntax error" in text else "type"
        raise CELCompileError("compilation failed: " + text, expression, reason) from None
    ast = decode_checked(checked.serialize())
    homogeneous = _homogeneous_errors(ast, expression)
    if homogeneous:
        raise CELCompileError("compilation failed: " + "\n".join(homogeneous), expression, "type")
    return ast


def _compile(expression: str, spec: EnvSpec) -> Selector:
    from drawb.cel.cost import estimate

    ast = _check(expression, spec)
    out = ast.root.type
    if not (out.kind == "bool" or out.kind == spec.attribute_type):
        raise CELCompileError(f"must evaluate to bool or the unknown type, not {out}", expression, "result")
    selector = Selector(expression, spec, ast, out)
    if not spec.stored:
        selector.cost = estimate(ast, spec)
        if selector.cost > MAX_COST:
            raise CELCompileError("too complex, exceeds cost limit", expression, "cost")
    return selector
