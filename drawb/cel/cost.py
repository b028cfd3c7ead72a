"""Static cost estimation as the API server computes it for DRA selectors.

A port of cel-go's checker cost estimator (v0.26) with the Kubernetes library estimator and DRA's
size estimator (the maximum sizes of the `device` fields). The C++ checker this package uses for
type checking has no cost estimator, hence this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from drawb.cel import library
from drawb.cel.ast import CheckedAst, Node, Type
from drawb.cel.device import declared_size
from drawb.cel.library.format import MAX_FORMAT_SIZE
from drawb.cel.ranges import (
    ONE,
    REGEX_LENGTH,
    STRING_TRAVERSAL,
    U64,
    UNKNOWN,
    ZERO,
    Est,
    fixed,
    saturating_add,
    saturating_mul,
)
from drawb.cel.spec import EnvSpec

def _declared_size(path: list[str] | None) -> Est | None:
    most = declared_size(path)
    return None if most is None else Est(0, most)


# --- the coster -----------------------------------------------------------------------------


@dataclass
class _Entry:
    kind: str
    key: Est
    val: Est


def _union_entry(a: _Entry | None, b: _Entry | None) -> _Entry | None:
    if a is None or b is None:
        return None
    return _Entry(a.kind, a.key.union(b.key), a.val.union(b.val))


@dataclass
class _Local:
    path: list[str] | None
    size: Est | None
    entry: _Entry | None


@dataclass
class _ArgNode:
    """cel-go's AstNode: path, type, expression and computed size."""

    path: list[str] | None
    type: Type
    node: Node | None
    size: Est | None


_ACCUMULATORS = ("@result", "@__result__", "__result__")
_STRING_COMPARE = {
    "less_string", "greater_string", "less_equals_string", "greater_equals_string", "less_bytes", "greater_bytes",
    "less_equals_bytes", "greater_equals_bytes", "equals", "not_equals",
}  # fmt: skip
def _is_scalar(t: Type) -> bool:
    if t.kind in ("bool", "double", "int", "uint"):
        return True
    if t.kind == "message" and t.name in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
        return True
    if t.kind == "opaque" and t.name == "optional_type" and t.params:
        return _is_scalar(t.params[0])
    return False


class _Coster:
    def __init__(self, ast: CheckedAst, spec: EnvSpec) -> None:
        self.ast = ast
        self.spec = spec
        self.paths: dict[int, list[str]] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.sizes: dict[int, Est] = {}
        self.entries: dict[int, _Entry] = {}

    # locals
    def push(self, name: str, local: _Local) -> None:
        self.locals.setdefault(name, []).append(local)

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    def peek(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def path(self, e: Node) -> list[str] | None:
        if e.kind == "ident":
            local = self.peek(e.name)
            if local is not None:
                return list(local.path) if local.path is not None else None
        p = self.paths.get(e.id)
        return list(p) if p is not None else None

    def arg_node(self, e: Node) -> _ArgNode:
        p = self.path(e)
        if p and p[0] in _ACCUMULATORS:
            p = None
        return _ArgNode(p, e.type, e, self.size(e))

    # sizes
    def size(self, e: Node) -> Est | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        literal = _literal_size(e)
        if literal is not None:
            return literal
        declared = _declared_size(self.path(e))
        if declared is not None:
            self.sizes[e.id] = declared
            return declared
        if _is_scalar(e.type):
            return ONE
        if e.kind == "ident":
            local = self.peek(e.name)
            if local is not None and local.size is not None:
                return local.size
        return None

    def size_or_unknown(self, x: Node | _ArgNode) -> Est:
        s = self.size(x) if isinstance(x, Node) else x.size
        return s if s is not None else UNKNOWN

    def entry(self, e: Node) -> _Entry | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if e.kind == "ident":
            local = self.peek(e.name)
            if local is not None and local.entry is not None:
                return local.entry
        return None

    def set_size(self, e: Node, s: Est | None) -> None:
        if s is not None:
            self.sizes[e.id] = s

    def set_entry(self, e: Node, s: _Entry | None) -> None:
        if s is not None:
            self.entries[e.id] = s

    def push_local(self, name: str, e: Node) -> None:
        self.push(name, _Local(self.path(e), self.size(e), self.entry(e)))

    def _container(self, rng: Node, entry: _Entry | None) -> str:
        return entry.kind if entry is not None else rng.type.kind

    def push_iter_single(self, name: str, rng: Node) -> None:
        entry = self.entry(rng)
        size, sub = (entry.key if entry else None), "@keys"
        if self._container(rng, entry) == "list":
            size, sub = (entry.val if entry else None), "@items"
        p = self.path(rng)
        self.push(name, _Local((p or []) + [sub], size, None))

    def push_iter_key(self, name: str, rng: Node) -> None:
        entry = self.entry(rng)
        sub = "@indices" if self._container(rng, entry) == "list" else "@keys"
        p = self.path(rng)
        self.push(name, _Local((p or []) + [sub], entry.key if entry else None, None))

    def push_iter_value(self, name: str, rng: Node) -> None:
        entry = self.entry(rng)
        sub = "@items" if self._container(rng, entry) == "list" else "@values"
        p = self.path(rng)
        self.push(name, _Local((p or []) + [sub], entry.val if entry else None, None))

    # costs
    def cost(self, e: Node | None) -> Est:
        if e is None:
            return ZERO
        if e.kind == "const":
            return ZERO
        if e.kind == "ident":
            return self.cost_ident(e)
        if e.kind == "select":
            return self.cost_select(e)
        if e.kind == "call":
            return self.cost_call(e)
        if e.kind == "list":
            return self.cost_list(e)
        if e.kind == "map":
            return self.cost_map(e)
        if e.kind == "struct":
            total = ZERO
            for _k, v, _o in e.entries:
                total = total.add(self.cost(v))
            return total.add(fixed(40))
        if e.kind == "comprehension":
            return self.cost_bind(e) if self.is_bind(e) else self.cost_comprehension(e)
        return ZERO

    def cost_ident(self, e: Node) -> Est:
        local = self.peek(e.name)
        if local is not None:
            self.paths[e.id] = list(local.path) if local.path is not None else []
            return ONE
        name = e.ref_name or e.name
        if name.startswith("device."):
            # cel-go keeps `device.<field>` as a select on the object variable `device`.
            self.paths[e.id] = ["device", name[len("device.") :]]
            return fixed(2)
        self.paths[e.id] = [name]
        return ONE

    def cost_select(self, e: Node) -> Est:
        if e.test_only:
            return self.cost(e.target)  # PresenceTestHasCost(false)
        total = self.cost(e.target)
        if e.target.type.kind in ("map", "message", "param"):
            total = total.add(ONE)
        self.paths[e.id] = (self.path(e.target) or []) + [e.name]
        return total

    def cost_call(self, e: Node) -> Est:
        if e.name == "dyn" and len(e.args) == 1:
            arg_cost = self.cost(e.args[0])
            self.set_size(e, self.size(e.args[0]))
            self.set_entry(e, self.entry(e.args[0]))
            return ONE.add(arg_cost)
        arg_costs = [self.cost(a) for a in e.args]
        arg_nodes = [self.arg_node(a) for a in e.args]
        if not e.overloads:
            return ZERO
        total = ZERO
        target = None
        if e.target is not None:
            total = total.add(self.cost(e.target))
            target = self.arg_node(e.target)
        fn_cost = Est(U64, 0)
        result_size: Est | None = None
        for overload in e.overloads:
            call_cost, size = self.function_cost(e, e.name, overload, target, arg_nodes, arg_costs)
            fn_cost = fn_cost.union(call_cost)
            if size is not None:
                result_size = size if result_size is None else result_size.union(size)
            if overload in ("index_list", "index_map") and e.args:
                entry = self.entry(e.args[0])
                result_size = entry.val if entry is not None else None
                suffix = "@items" if overload == "index_list" else "@values"
                self.paths[e.id] = (self.path(e.args[0]) or []) + [suffix]
            if result_size is None:
                result_size = self.size(e)
        self.set_size(e, result_size)
        return total.add(fn_cost)

    def cost_list(self, e: Node) -> Est:
        total = ZERO
        item = Est(U64, 0) if e.args else Est(0, 0)
        for a in e.args:
            total = total.add(self.cost(a))
            item = item.union(self.size_or_unknown(a))
        self.set_entry(e, _Entry("list", ONE, item))
        return total.add(fixed(10))

    def cost_map(self, e: Node) -> Est:
        total = ZERO
        key = Est(U64, 0) if e.entries else Est(0, 0)
        val = Est(U64, 0) if e.entries else Est(0, 0)
        for k, v, _o in e.entries:
            total = total.add(self.cost(k)).add(self.cost(v))
            key = key.union(self.size_or_unknown(k))
            val = val.union(self.size_or_unknown(v))
        self.set_entry(e, _Entry("map", key, val))
        return total.add(fixed(30))

    def is_bind(self, e: Node) -> bool:
        r, c = e.iter_range, e.loop_condition
        return (
            r.kind == "list"
            and not r.args
            and c.kind == "const"
            and c.value is False
            and e.accu_var not in _ACCUMULATORS
        )

    def cost_bind(self, e: Node) -> Est:
        total = self.cost(e.iter_range).add(self.cost(e.accu_init))
        self.push_local(e.accu_var, e.accu_init)
        total = total.add(self.cost(e.result))
        self.pop(e.accu_var)
        self.set_size(e, self.size(e.result))
        self.set_entry(e, self.entry(e.result))
        return total

    def cost_comprehension(self, e: Node) -> Est:
        total = self.cost(e.iter_range).add(self.cost(e.accu_init))
        self.push_local(e.accu_var, e.accu_init)
        if e.iter_var2:
            self.push_iter_key(e.iter_var, e.iter_range)
            self.push_iter_value(e.iter_var2, e.iter_range)
        else:
            self.push_iter_single(e.iter_var, e.iter_range)
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        total = total.add(self.cost(e.result))
        self.pop(e.accu_var)
        count = self.size_or_unknown(e.iter_range)
        total = total.add(count.mul(step.add(loop)))
        init = e.accu_init
        if init.kind == "const":
            self.set_size(e, self.size(init))
        elif init.kind in ("list", "map"):
            self.set_size(e, count)
            self.set_entry(e, self.entry(e.loop_step))
        return total

    # function costs: the Kubernetes library estimator, DRA's `includes`, then cel-go's built-ins
    def function_cost(
        self, e: Node, function: str, overload: str, target: _ArgNode | None, args: list[_ArgNode], arg_costs: list[Est]
    ) -> tuple[Est, Est | None]:
        arg_sum = ZERO
        for c in arg_costs:
            arg_sum = arg_sum.add(c)
        k8s = self.k8s_call_cost(function, overload, target, args)
        if k8s is not None:
            cost, size = k8s
            return cost.add(arg_sum), size
        so = self.size_or_unknown
        if overload == "string_to_bytes" and len(args) == 1:
            sz = so(args[0])
            return sz.factor(STRING_TRAVERSAL).add(arg_sum), Est(sz.lo, saturating_mul(sz.hi, 4))
        if overload == "bytes_to_string" and len(args) == 1:
            sz = so(args[0])
            return sz.factor(STRING_TRAVERSAL).add(arg_sum), Est(sz.lo // 4, sz.hi)
        if overload == "strings_quote" and len(args) == 1:
            sz = so(args[0])
            return sz.factor(STRING_TRAVERSAL).add(arg_sum), Est(sz.lo + 2, saturating_add(saturating_mul(sz.hi, 2), 2))
        if overload == "string_format" and target is not None:
            return so(target).factor(STRING_TRAVERSAL).add(arg_sum), None
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return so(args[0]).factor(STRING_TRAVERSAL).add(arg_sum), None
        if overload == "in_list" and len(args) == 2:
            return so(args[1]).factor(1).add(arg_sum), None
        if overload == "matches_string" and target is not None and len(args) == 1:
            str_cost = so(target).add(ONE).factor(STRING_TRAVERSAL)
            regex_cost = so(args[0]).factor(REGEX_LENGTH)
            return str_cost.mul(regex_cost).add(arg_sum), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            return so(target).factor(STRING_TRAVERSAL).mul(so(args[0]).factor(STRING_TRAVERSAL)).add(arg_sum), None
        if overload in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs
            return Est(lhs.lo, lhs.add(rhs).hi), None
        if overload == "conditional":
            size = so(args[1]).union(so(args[2]))
            self.set_entry(e, _union_entry(self.entry(args[1].node), self.entry(args[2].node)))
            return arg_costs[0].add(arg_costs[1].union(arg_costs[2])), size
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = so(args[0]).add(so(args[1]))
            self.set_entry(e, _union_entry(self.entry(args[0].node), self.entry(args[1].node)))
            if overload == "add_list":
                return ONE.add(arg_sum), result
            return result.factor(STRING_TRAVERSAL).add(arg_sum), result
        if overload in _STRING_COMPARE:
            lhs, rhs = so(args[0]), so(args[1])
            smallest = min(lhs.hi, rhs.hi)
            return Est(1 if smallest > 0 else 0, smallest).factor(STRING_TRAVERSAL).add(arg_sum), None
        return ONE.add(arg_sum), None

    def size_of(self, node: _ArgNode) -> Est:
        """The size estimate of a call's argument: computed, else declared, else unknown."""
        if node.size is not None:
            return node.size
        declared = _declared_size(node.path)
        return declared if declared is not None else UNKNOWN

    def list_element(self, lst: _ArgNode) -> _ArgNode | None:
        """An argument standing for the elements of a list argument, if its type says what they are."""
        if lst.type.params:
            path = lst.path + ["@items"] if lst.path is not None else None
            return _ArgNode(path, lst.type.params[0], None, None)
        return None

    def k8s_call_cost(
        self, function: str, overload: str, target: _ArgNode | None, args: list[_ArgNode]
    ) -> tuple[Est, Est | None] | None:
        """The Kubernetes libraries' estimate: the library function's own, or that of `==` on their types."""
        cost = library.cost_of(function)
        if cost is not None:
            return cost(self, overload, target, args)
        if function == "_==_" and len(args) == 2 and args[0].type == args[1].type:
            t = args[0].type
            if t.kind == "opaque":
                if t.name in ("net.IP", "net.CIDR", "kubernetes.Quantity", "kubernetes.Semver"):
                    return ONE, None
                if t.name == "kubernetes.NamedFormat":
                    return Est(1, MAX_FORMAT_SIZE).factor(STRING_TRAVERSAL), None
                if t.name == "kubernetes.URL":
                    size = ONE
                    if args[1].size is not None:
                        size = args[1].size.union(args[1].size)
                    return Est(1, size.hi).factor(STRING_TRAVERSAL), None
        return None


def _literal_size(e: Node) -> Est | None:
    if e.kind == "const":
        v = e.value
        if isinstance(v, str):
            return fixed(len(v))
        if isinstance(v, bytes):
            return fixed(len(v))
        return ONE
    if e.kind == "list":
        return fixed(len(e.args))
    if e.kind == "map":
        return fixed(len(e.entries))
    return None


def estimate(ast: CheckedAst, spec: EnvSpec) -> int:
    """The maximum estimated cost (`CompilationResult.MaxCost`)."""
    return _Coster(ast, spec).cost(ast.root).hi
