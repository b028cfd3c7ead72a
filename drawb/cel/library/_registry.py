"""Where every CEL library module declares its functions: the checker's declarations and the implementations.

A module declares a function once, with ``@fn(name, *overloads)`` above its implementation: each
overload is ``(overload id, parameter types, result type, is member)`` as the checker takes it; a
function of CEL's standard library or of a cel-go extension the checker already declares has no
overloads here. ``cost=`` gives the API server's estimate where it is not cel-go's default.
`declare` adds overloads without an implementation (operators, or a name two
libraries share), `declare_yaml` what only the checker's YAML configuration can declare (type parameters).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from drawb.cel.decls import declare as checker_declaration
from drawb.cel.ranges import ONE, STRING_TRAVERSAL, Est
from drawb.cel.values import CelError, equals

if TYPE_CHECKING:
    from cel_expr_python import cel

    from drawb.cel.ast import Node
    from drawb.cel.spec import EnvSpec

Impl = Callable[..., Any]
When = Callable[["EnvSpec"], bool]
# The API server's cost estimate of a call: (estimator, overload id, target, arguments) -> (cost, result size)
# or None for cel-go's default; the estimator gives `size_of(node)` and `list_element(node)`.
Cost = Callable[[Any, str, Any, list], "tuple[Est, Est | None] | None"]

_IMPLS: dict[str, Impl] = {}
_COSTS: dict[str, Cost] = {}
_DECLARED: dict[str, tuple[list[tuple], When | None]] = {}
_YAML: list[str] = []


def declare(name: str, *overloads: tuple, when: When | None = None) -> None:
    """Declare overloads of ``name`` to the checker (in environments where ``when(spec)`` holds, if given)."""
    known, _ = _DECLARED.get(name, ([], None))
    _DECLARED[name] = (known + list(overloads), when)


def declare_yaml(functions: str) -> None:
    """Declare functions in the checker's YAML form (entries of its ``functions:`` list)."""
    _YAML.append(functions)


def implement(name: str, impl: Impl, cost: Cost | None = None) -> None:
    """Evaluate the CEL function ``name`` with ``impl`` (receiver first for member calls), estimated by ``cost``."""
    _IMPLS[name] = impl
    if cost is not None:
        _COSTS[name] = cost


def fn(
    name: str,
    *overloads: tuple,
    aliases: tuple[str, ...] = (),
    when: When | None = None,
    cost: Cost | None = None,
) -> Callable[[Impl], Impl]:
    """Declare ``name`` with ``overloads`` (if any), its cost estimate (if not cel-go's default) and
    register the decorated function as its implementation."""

    def register(impl: Impl) -> Impl:
        for each in (name, *aliases):
            implement(each, impl)
        if overloads:
            declare(name, *overloads, when=when)
        if cost is not None:
            _COSTS[name] = cost
        return impl

    return register


def cost_of(name: str) -> Cost | None:
    """The cost estimator of the library function ``name``, if it has its own."""
    return _COSTS.get(name)


def constant_cost(c: Any, overload: str, target: Any, args: list) -> tuple[Est, None]:
    """The Kubernetes libraries' cost of a call that does not depend on its arguments: 1."""
    return ONE, None


def string_arg_cost(c: Any, overload: str, target: Any, args: list) -> tuple[Est, None] | None:
    """The cost of reading the first argument's characters once (`quantity("1Gi")`, `isIP(s)`, ...)."""
    if not args:
        return None
    return c.size_of(args[0]).factor(STRING_TRAVERSAL), None

def lookup(name: str, node: Node, spec: Any) -> Impl:
    """The implementation for a call node (receiver first for member calls)."""
    impl = _IMPLS.get(name)
    if impl is None:
        message = f"drawb does not evaluate the CEL function '{name}'"

        def unsupported(*_args: Any) -> Any:
            raise CelError(message)

        return unsupported
    return impl


def declarations(spec: EnvSpec) -> list[cel.FunctionDecl]:
    """The checker's declarations of every library function in the environment ``spec``."""
    return [
        checker_declaration(name, *overloads)
        for name, (overloads, when) in _DECLARED.items()
        if when is None or when(spec)
    ]


def yaml_declarations() -> str:
    """The checker's YAML ``functions:`` section for what only YAML can declare."""
    return "functions:\n" + "".join(_YAML)


def is_str(v: Any) -> bool:
    return type(v) is str


def is_int(v: Any) -> bool:
    return type(v) is int


def in_list(item: Any, items: Any) -> bool:
    """CEL's `in` on a list: some element equals ``item``."""
    return any(equals(item, x) for x in items)
