"""Per-device CEL evaluation with cel-go's semantics, compiled from the checked tree into closures."""

from __future__ import annotations

from typing import Any, Callable

from drawb.cel import library
from drawb.cel.ast import Node
from drawb.cel.operators import STRICT_OPERATORS, type_label, has_field, index, logical_and, logical_or
from drawb.cel.values import CelError, Optional, go_type_name, key_text, map_find, no_such_overload

COST_LIMIT = 1_000_000
COST_EXCEEDED = "operation cancelled: actual cost limit exceeded"

Fn = Callable[["Ctx"], Any]


class Ctx:
    """Variables of one evaluation plus the running cost."""

    __slots__ = ("vars", "cost", "limit")

    def __init__(self, variables: dict[str, Any], limit: int = COST_LIMIT) -> None:
        self.vars = variables
        self.cost = 0
        self.limit = limit


# --- compilation to closures ----------------------------------------------------------------


class Compiler:
    """Turns a checked tree into a closure `fn(ctx) -> value`."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec

    def compile(self, node: Node) -> Fn:
        """The closure evaluating `node` and its subtree."""
        method = getattr(self, "_" + node.kind)
        return method(node)

    def _const(self, node: Node) -> Fn:
        value = node.value
        return lambda ctx: value

    def _ident(self, node: Node) -> Fn:
        name = node.ref_name or node.name
        def ident(ctx: Ctx) -> Any:
            try:
                return ctx.vars[name]
            except KeyError:
                raise CelError(f"no such attribute(s): {name}") from None

        return ident

    def _select(self, node: Node) -> Fn:
        operand = self.compile(node.target)
        field = node.name
        if node.test_only:
            return lambda ctx: has_field(operand(ctx), field)

        def select(ctx: Ctx) -> Any:
            return index(operand(ctx), field)

        return select

    def _list(self, node: Node) -> Fn:
        elems = [self.compile(a) for a in node.args]
        optional = set(node.optional_indices)
        if not optional:
            return lambda ctx: [e(ctx) for e in elems]

        def make(ctx: Ctx) -> list:
            out = []
            for i, e in enumerate(elems):
                v = e(ctx)
                if i in optional:
                    if not isinstance(v, Optional):
                        raise no_such_overload(v)
                    if v.has_value:
                        out.append(v.value)
                else:
                    out.append(v)
            return out

        return make

    def _map(self, node: Node) -> Fn:
        entries = [(self.compile(k), self.compile(v), opt) for k, v, opt in node.entries]

        def make(ctx: Ctx) -> dict:
            out: dict = {}
            for k, v, opt in entries:
                key = k(ctx)
                if isinstance(key, (float, list, tuple, dict)) or key is None:
                    raise CelError(f"unsupported key type: {type_label(key)}")
                value = v(ctx)
                if opt:
                    if not isinstance(value, Optional):
                        raise no_such_overload(value)
                    if not value.has_value:
                        continue
                    value = value.value
                if map_find(out, key)[0]:
                    raise CelError(f"insert failed: key {key_text(key)} already exists")
                out[key] = value
            return out

        return make

    def _struct(self, node: Node) -> Fn:
        raise CelError(f"unsupported message creation: {node.name}")

    def _comprehension(self, node: Node) -> Fn:
        rng = self.compile(node.iter_range)
        init = self.compile(node.accu_init)
        cond = self.compile(node.loop_condition)
        step = self.compile(node.loop_step)
        result = self.compile(node.result)
        iv, iv2, av = node.iter_var, node.iter_var2, node.accu_var
        body_cost = _static_size(node.loop_condition) + _static_size(node.loop_step)

        def fold(ctx: Ctx) -> Any:
            r = rng(ctx)
            if iv2:
                if isinstance(r, dict):
                    items: Any = r.items()
                elif isinstance(r, (list, tuple)):
                    items = enumerate(r)
                else:
                    raise CelError(f"unsupported comprehension range type: {go_type_name(r)}")
            elif isinstance(r, (dict, list, tuple)):
                items = r
            else:
                raise CelError(f"got '{go_type_name(r)}', expected iterable type")
            outer = ctx.vars
            local = dict(outer)
            ctx.vars = local
            try:
                local[av] = init(ctx)
                for item in items:
                    ctx.cost += body_cost
                    if ctx.cost > ctx.limit:
                        raise CelError(COST_EXCEEDED)
                    if iv2:
                        local[iv], local[iv2] = item
                    else:
                        local[iv] = item
                    if cond(ctx) is False:
                        break
                    local[av] = step(ctx)
                return result(ctx)
            finally:
                ctx.vars = outer

        return fold

    def _call(self, node: Node) -> Fn:
        name = node.name
        special = _SPECIAL.get(name)
        if special is not None:
            return special(self, node)
        operator = STRICT_OPERATORS.get(name)
        if operator is not None:
            if len(node.args) == 1:
                (a0,) = (self.compile(a) for a in node.args)
                return lambda ctx: operator(a0(ctx))
            a0, a1 = (self.compile(a) for a in node.args)
            return lambda ctx: operator(a0(ctx), a1(ctx))
        args = ([self.compile(node.target)] if node.target is not None else []) + [self.compile(a) for a in node.args]
        impl = library.lookup(name, node, self.spec)
        if len(args) == 0:
            return lambda ctx: impl()
        if len(args) == 1:
            (a0,) = args
            return lambda ctx: impl(a0(ctx))
        if len(args) == 2:
            a0, a1 = args
            return lambda ctx: impl(a0(ctx), a1(ctx))
        return lambda ctx: impl(*[a(ctx) for a in args])


def _static_size(node: Node) -> int:
    count = 0 if node.kind == "const" else 1
    for child in node.children():
        count += _static_size(child)
    return count


def _and(c: Compiler, node: Node) -> Fn:
    lhs, rhs = (c.compile(a) for a in node.args)

    def and_(ctx: Ctx) -> Any:
        try:
            left = lhs(ctx)
        except CelError as err:
            left = err
        if left is False:
            return False
        try:
            right = rhs(ctx)
        except CelError as err:
            right = err
        return logical_and(left, right)

    return and_


def _or(c: Compiler, node: Node) -> Fn:
    lhs, rhs = (c.compile(a) for a in node.args)

    def or_(ctx: Ctx) -> Any:
        try:
            left = lhs(ctx)
        except CelError as err:
            left = err
        if left is True:
            return True
        try:
            right = rhs(ctx)
        except CelError as err:
            right = err
        return logical_or(left, right)

    return or_


def _conditional(c: Compiler, node: Node) -> Fn:
    cond, then, other = (c.compile(a) for a in node.args)

    def conditional(ctx: Ctx) -> Any:
        v = cond(ctx)
        if v is True:
            return then(ctx)
        if v is False:
            return other(ctx)
        raise no_such_overload(v)

    return conditional


def _not_strictly_false(c: Compiler, node: Node) -> Fn:
    (arg,) = (c.compile(a) for a in node.args)

    def not_strictly_false(ctx: Ctx) -> bool:
        try:
            return arg(ctx) is not False
        except CelError:
            return True

    return not_strictly_false


_SPECIAL: dict[str, Callable[[Compiler, Node], Fn]] = {
    "_&&_": _and,
    "_||_": _or,
    "_?_:_": _conditional,
    "@not_strictly_false": _not_strictly_false,
    "not_strictly_false": _not_strictly_false,
}
