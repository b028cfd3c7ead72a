"""Compile a DRA CEL device selector as the API server does, and match devices as the scheduler does."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from drawb.cel.ast import CheckedAst, Node, Type, decode_checked, go_type_string
from drawb.cel.device import from_json
from drawb.cel.env import EnvSpec, checker_env, env_spec
from drawb.cel.interp import COST_LIMIT, Compiler, Ctx
from drawb.cel.values import CelError, type_name

MAX_EXPRESSION_BYTES = 10 * 1024
MAX_COST = 1_000_000
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() "
    "for optional fields"
)
# The scheduler adds the hint from Kubernetes 1.37 on (k8s.io/dynamic-resource-allocation/cel's
# EnhanceRuntimeError, first in v0.37.0; v0.34.x-v0.36.x report the bare "no such key: x").
NO_SUCH_KEY_HINT_SINCE = 37


class CELCompileError(ValueError):
    """The API server would reject the expression; `str()` is its detail text."""

    def __init__(self, message: str, expression: str, reason: str) -> None:
        super().__init__(message)
        self.message = message
        self.expression = expression
        self.reason = reason  # "syntax", "type", "length", "cost", "result"


class CELEvalError(RuntimeError):
    """Evaluating the selector on a device fails in the scheduler (the allocation attempt aborts)."""

    def __init__(self, message: str, minor: int = NO_SUCH_KEY_HINT_SINCE) -> None:
        super().__init__(enhance_runtime_error(message, minor))
        self.raw = message


def enhance_runtime_error(message: str, minor: int = NO_SUCH_KEY_HINT_SINCE) -> str:
    """The message as the scheduler of Kubernetes 1.`minor` reports it: 1.37+ hints at `.?`/`has()`
    for missing keys (idempotent); earlier versions report it unchanged."""
    if minor >= NO_SUCH_KEY_HINT_SINCE and "no such key:" in message and NO_SUCH_KEY_HINT not in message:
        return message + NO_SUCH_KEY_HINT
    return message


_CPP_PREFIX = re.compile(r"^[A-Z_]+: ")
_CPP_SUFFIX = re.compile(r" \[[A-Z_]+\]$")
_DEVICE_FIELD = re.compile(r"undeclared reference to 'device\.([A-Za-z_][A-Za-z0-9_]*)' \(in container ''\)")
_DEVICE_SELECT = "expression of type 'kubernetes.DRADevice' cannot be the operand of a select operation"


_ISSUE = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")
_NO_OVERLOAD = re.compile(r"found no matching overload for '([^']+)' applied to '\((.*)\)'")
_UNDECLARED = re.compile(r"undeclared reference to '([^']+)' \(in container ''\)")
# The C++ parser's macro messages as cel-go words them.
_MACRO_MESSAGES = {
    "has() argument must be a field selection": "invalid argument to has() macro",
    "cel.bind() variable name must be a simple identifier": "cel.bind() variable names must be simple identifiers",
}
_MACRO_NAME = re.compile(r"\w+\(\) variable name must be a simple identifier")
_CPP_TYPE_NAMES = (("google.protobuf.Duration", "duration"), ("google.protobuf.Timestamp", "timestamp"))
_NAMESPACES = {"device", "cel", "optional", "sets", "lists", "strings", "format", "ip"}


def _split_types(text: str) -> list[str]:
    """Top-level comma split of a type list such as `map(string, int), bool`."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    if text.strip():
        out.append(text[start:].strip())
    return out


def _offset(expression: str, line: int, col: int) -> int:
    lines = expression.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + col - 1


def _issues_text(raw: str, expression: str, parsed: CheckedAst | None) -> str:
    """The C++ checker's status text as cel-go's `Issues.String()`."""
    text = _CPP_SUFFIX.sub("", _CPP_PREFIX.sub("", raw.strip()))
    for cpp, go in _CPP_TYPE_NAMES:
        text = text.replace(cpp, go)
    by_offset = {}
    if parsed is not None:
        for node in parsed.nodes.values():
            by_offset.setdefault(parsed.positions.get(node.id, -1), []).append(node)
    issues: list[tuple[int, str]] = []
    for block in re.split(r"\n(?=ERROR: )", text):
        m = _ISSUE.match(block)
        if m is None:
            return text
        offset = _offset(expression, int(m.group(1)), int(m.group(2)))
        message = m.group(3)
        if "*error*" in message:
            continue  # cel-go does not report follow-up errors on operands already in error
        message = _DEVICE_FIELD.sub(lambda f: f"undefined field '{f.group(1)}'", message)
        message = _MACRO_MESSAGES.get(message, message)
        if _MACRO_NAME.fullmatch(message):
            message = "argument must be a simple name"
        nodes = by_offset.get(offset, [])
        if message == _DEVICE_SELECT:
            select = next((n for n in nodes if n.kind == "select"), None)
            if select is not None:
                message = f"undefined field '{select.name}'"
        over = _NO_OVERLOAD.fullmatch(message)
        if over is not None:
            call = next((n for n in nodes if n.kind == "call" and n.name == over.group(1)), None)
            if call is not None and over.group(1) in ("_&&_", "_||_"):
                types = _split_types(over.group(2))
                for operand, t in zip(call.args, types):
                    if t not in ("bool", "dyn", "any"):
                        issues.append((parsed.positions.get(operand.id, offset), f"expected type 'bool' but found '{t}'"))
                continue
            if call is not None and call.target is not None:
                types = _split_types(over.group(2))
                message = f"found no matching overload for '{over.group(1)}' applied to '{types[0]}.({', '.join(types[1:])})'"
        undeclared = _UNDECLARED.fullmatch(message)
        if undeclared is not None and "." in undeclared.group(1):
            root = undeclared.group(1).split(".")[0]
            if root not in _NAMESPACES:
                node = next((n for n in nodes if n.kind == "select"), None)
                while node is not None and node.kind == "select":
                    node = node.target
                if node is not None and node.kind == "ident":
                    offset = parsed.positions.get(node.id, offset)
                    message = f"undeclared reference to '{node.name}' (in container '')"
        issues.append((offset, message))
    return "\n".join(format_issue(expression, off, msg) for off, msg in issues)


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


def _homogeneous_errors(ast: CheckedAst, expression: str) -> list[tuple[int, str]]:
    """cel-go's homogeneous aggregate literal validator (literals inside `format` calls are exempt)."""
    issues: list[tuple[int, str]] = []

    def elem_type(node: Node, optional: bool) -> Type:
        t = node.type
        if optional and t.kind == "opaque" and t.name == "optional_type" and t.params:
            return t.params[0]
        return t

    def mismatch(node: Node, expected: Type, actual: Type) -> None:
        issues.append((ast.positions.get(node.id, 0), f"expected type '{expected}' but found '{actual}'"))

    def walk(node: Node, exempt: bool) -> None:
        if node.kind == "list" and not exempt:
            optional = set(node.optional_indices)
            first: Type | None = None
            for i, element in enumerate(node.args):
                t = elem_type(element, i in optional)
                if first is None:
                    first = t
                elif t != first:
                    mismatch(element, first, t)
                    break
        elif node.kind == "map" and not exempt:
            key_type = val_type = None
            for key, value, optional in node.entries:
                kt, vt = key.type, elem_type(value, optional)
                if key_type is None:
                    key_type, val_type = kt, vt
                    continue
                if kt != key_type:
                    mismatch(key, key_type, kt)
                if vt != val_type:
                    mismatch(value, val_type, vt)
        inner = exempt or (node.kind == "call" and node.name == "format")
        for child in node.children():
            walk(child, inner)

    walk(ast.root, False)
    return issues


_DURATION = re.compile(r"[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)\Z")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})\Z")


_FORMAT_VERBS = set("sdfebxXo")


def _format_call_errors(ast: CheckedAst) -> list[tuple[int, str]]:
    """cel-go's string.format validator: clause syntax and argument count of literal format calls."""
    issues: list[tuple[int, str]] = []
    for node in ast.nodes.values():
        if node.kind != "call" or node.name != "format" or node.target is None or len(node.args) != 1:
            continue
        target, args = node.target, node.args[0]
        if target.kind != "const" or not isinstance(target.value, str) or args.kind != "list":
            continue
        error = _check_format_string(target.value, len(args.args))
        if error is not None:
            issues.append((ast.positions.get(node.id, 0), error))
    return issues


def _check_format_string(text: str, size: int) -> str | None:
    i = requested = 0
    while i < len(text):
        if text[i] != "%":
            i += 1
            continue
        if i + 1 < len(text) and text[i + 1] == "%":
            i += 2
            continue
        requested += 1
        if i + 1 >= len(text):
            return "unexpected end of string"
        if requested > size:
            return f"index {requested - 1} out of range"
        i += 1
        if text[i] == ".":
            i += 1
            while i < len(text) and text[i].isdigit():
                i += 1
            if i >= len(text):
                return "could not parse formatting clause: error while parsing precision: could not find end of precision specifier"
        if text[i] not in _FORMAT_VERBS:
            return f'could not parse formatting clause: unrecognized formatting clause "{text[i]}"'
        i += 1
    if size > requested:
        return f"too many arguments supplied to string.format (expected {requested}, got {size})"
    return None


def _constant_regex_error(ast: CheckedAst) -> str | None:
    """Patterns the planner precompiles (`matches`, `find`, `findAll` with a literal pattern)."""
    from drawb.cel.library import compile_re

    for node in ast.nodes.values():
        if node.kind != "call" or node.name not in ("matches", "find", "findAll"):
            continue
        index = 0 if node.target is not None else 1
        if len(node.args) <= index:
            continue
        pattern = node.args[index]
        if pattern.kind == "const" and isinstance(pattern.value, str):
            try:
                compile_re(pattern.value)
            except CelError as err:
                return err.message
    return None


def _literal_errors(ast: CheckedAst) -> list[tuple[int, str]]:
    """cel-go's duration, timestamp and regex literal validators (Kubernetes base environment, 1.29+)."""
    from drawb.cel.library import compile_re

    issues: list[tuple[int, str]] = []
    for node in ast.nodes.values():
        if node.kind != "call" or not node.args or node.name not in ("duration", "timestamp", "matches"):
            continue
        arg = node.args[0]
        if arg.kind != "const" or not isinstance(arg.value, str):
            continue
        if node.name == "matches":
            try:
                compile_re(arg.value)
                continue
            except CelError:
                pass
        elif node.name == "duration" and _DURATION.match(arg.value):
            continue
        elif node.name == "timestamp" and _TIMESTAMP.match(arg.value):
            continue
        issues.append((ast.positions.get(arg.id, 0), f"invalid {node.name} argument"))
    return issues


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
    kubernetes_version: str = "1.34",
    stored: bool = False,
    feature_gates: Mapping[str, bool] | None = None,
) -> Selector:
    """Compile like the API server (`stored=False`) or the scheduler (`stored=True`); CELCompileError if rejected."""
    spec = env_spec(kubernetes_version, stored, feature_gates)
    if not isinstance(expression, str):
        raise TypeError(f"expression must be a str, not {type(expression).__name__}")
    if len(expression.encode("utf-8")) > MAX_EXPRESSION_BYTES and not stored:
        # apimachinery's field.TooLong wording changed after 1.34
        limit = "may not be more than" if spec.minor <= 34 else "must have at most"
        raise CELCompileError(f"{limit} {MAX_EXPRESSION_BYTES} bytes", expression, "length")
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
    variables = from_json(device or {}, driver, spec)
    return Compiler(spec).compile(ast.root)(Ctx(variables))


_HAS_DEVICE_FIELD = re.compile(r"\bhas\s*\(\s*device\s*\.\s*(driver|attributes|capacity|allowMultipleAllocations)\s*\)")


def _presence_of_device_fields(expression: str, spec: EnvSpec) -> str:
    """`has(device.<declared field>)` as a same-length `true` (always true in cel-go; the C++ checker,
    which sees the fields as qualified variables, would type it as the field itself)."""

    if "has" not in expression:
        return expression
    literal = _in_string_literal(expression)

    def replace(m: re.Match) -> str:
        if literal[m.start()] or (m.group(1) == "allowMultipleAllocations" and not spec.allow_multiple_allocations):
            return m.group(0)
        width = len(m.group(0))
        return "(true" + " " * (width - 6) + ")"

    return _HAS_DEVICE_FIELD.sub(replace, expression)


_TRIPLE_QUOTES = ("'" * 3, '"' * 3)


def _in_string_literal(text: str) -> list[bool]:
    """Per character: inside a CEL string or bytes literal (quotes, triple quotes, raw, escapes)."""
    out = [False] * (len(text) + 1)
    i = 0
    while i < len(text):
        c = text[i]
        if c not in ("'", '"'):
            i += 1
            continue
        raw = i > 0 and text[i - 1] in "rR"
        quote = text[i : i + 3] if text[i : i + 3] in _TRIPLE_QUOTES else c
        j = i + len(quote)
        while j < len(text) and not text.startswith(quote, j):
            j += 2 if (text[j] == "\\" and not raw) else 1
        end = min(j + len(quote), len(text))
        for k in range(i, end):
            out[k] = True
        i = end
    return out


CEL_GO_MAX_NESTING = 250  # cel-go's parser recursion limit; the C++ parser stops at 32


def _recursion_error(expression: str) -> None:
    """Nesting beyond the C++ parser's limit: cel-go's error past 250, else say drawb cannot check it."""
    literal = _in_string_literal(expression)
    depth = deepest = 0
    for i, c in enumerate(expression):
        if literal[i]:
            continue
        if c in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in ")]}":
            depth -= 1
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
        source = _presence_of_device_fields(expression, spec)
        checked = env.compile(source)
    except RuntimeError as err:
        if "recursion limit exceeded" in str(err):
            _recursion_error(expression)
        try:
            parsed = decode_checked(env.compile(source, disable_check=True).serialize())
        except RuntimeError:
            parsed = None
        text = _issues_text(str(err), expression, parsed)
        reason = "syntax" if "Syntax error" in text else "type"
        raise CELCompileError("compilation failed: " + text, expression, reason) from None
    ast = decode_checked(checked.serialize())
    issues = sorted(_literal_errors(ast) + _format_call_errors(ast) + _homogeneous_errors(ast, expression))
    if issues:
        text = "\n".join(format_issue(expression, offset, message) for offset, message in issues)
        raise CELCompileError("compilation failed: " + text, expression, "type")
    regex_error = _constant_regex_error(ast)
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
