"""The checked CEL syntax tree, decoded from the C++ checker's serialized `cel.expr.CheckedExpr`."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

# --- protobuf wire format -------------------------------------------------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """Split one protobuf message into (field number, wire type, raw value) triples."""
    out = []
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value = buf[pos : pos + 8]
            pos += 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value = buf[pos : pos + size]
            pos += size
        elif wire == 5:
            value = buf[pos : pos + 4]
            pos += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        out.append((number, wire, value))
    return out


def _field_bytes(number: int, value: bytes) -> bytes:
    return _varint_bytes(number << 3 | 2) + _varint_bytes(len(value)) + value


def _varint_bytes(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


# --- types ----------------------------------------------------------------------------------

_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}


@dataclass(frozen=True)
class Type:
    """A CEL type as the checker printed it: `kind` plus parameters."""

    kind: str  # dyn null bool int uint double string bytes list map opaque type error param wrapper any ...
    params: tuple["Type", ...] = ()
    name: str = ""

    def __str__(self) -> str:
        if self.kind == "list":
            return f"list({self.params[0]})"
        if self.kind == "map":
            return f"map({self.params[0]}, {self.params[1]})"
        if self.kind == "opaque":
            if self.params:
                return f"{self.name}({', '.join(map(str, self.params))})"
            return self.name
        if self.kind == "type":
            return f"type({self.params[0]})" if self.params else "type"
        if self.kind == "message":
            return _SHORT_NAMES.get(self.name, self.name)
        if self.kind == "param":
            return self.name
        if self.kind == "wrapper":
            return f"wrapper({self.params[0]})"
        if self.kind == "error":
            return "*error*"
        if self.kind == "null":
            return "null_type"
        return self.kind


DYN = Type("dyn")
_SHORT_NAMES = {"google.protobuf.Duration": "duration", "google.protobuf.Timestamp": "timestamp"}


def go_type_string(t: Type) -> str:
    """cel-go's `Type.String()` (used in the result-type message): well-known types by full name."""
    if t.kind == "any":
        return "google.protobuf.Any"
    if t.kind == "message":
        return t.name
    if t.params and t.kind in ("list", "map", "opaque", "type", "wrapper"):
        inner = ", ".join(go_type_string(p) for p in t.params)
        head = {"list": "list", "map": "map", "type": "type", "wrapper": "wrapper"}.get(t.kind, t.name)
        return f"{head}({inner})"
    return str(t)


def _decode_type(buf: bytes) -> Type:
    for number, _wire, value in _fields(buf):
        if number == 1:
            return DYN
        if number == 2:
            return Type("null")
        if number == 3:
            return Type(_PRIMITIVES.get(value, "dyn"))
        if number == 4:
            return Type("wrapper", (Type(_PRIMITIVES.get(value, "dyn")),))
        if number == 5:
            wk = _WELL_KNOWN.get(value, "dyn")
            return Type("any") if wk == "any" else Type("message", name=wk)
        if number == 6:
            elem = DYN
            for n, _w, v in _fields(value):
                if n == 1:
                    elem = _decode_type(v)
            return Type("list", (elem,))
        if number == 7:
            key = val = DYN
            for n, _w, v in _fields(value):
                if n == 1:
                    key = _decode_type(v)
                elif n == 2:
                    val = _decode_type(v)
            return Type("map", (key, val))
        if number == 9:
            return Type("message", name=value.decode())
        if number == 10:
            return Type("param", name=value.decode())
        if number == 11:
            return Type("type", (_decode_type(value),) if value else ())
        if number == 12:
            return Type("error")
        if number == 14:
            name, params = "", []
            for n, _w, v in _fields(value):
                if n == 1:
                    name = v.decode()
                elif n == 2:
                    params.append(_decode_type(v))
            return Type("opaque", tuple(params), name)
    return DYN


# --- expressions ----------------------------------------------------------------------------


@dataclass
class Node:
    """One expression node; `kind` is const, ident, select, call, list, map, struct or comprehension."""

    id: int
    kind: str
    value: Any = None  # const: python value (int/float/str/bytes/bool/None, UInt for uint)
    name: str = ""  # ident name, select field, call function
    target: Node | None = None  # select operand, member call receiver
    args: list[Node] = field(default_factory=list)  # call args, list elements
    test_only: bool = False
    optional_indices: tuple[int, ...] = ()
    entries: list[tuple[Node, Node, bool]] = field(default_factory=list)  # map entries (key, value, optional)
    # comprehension
    iter_var: str = ""
    iter_var2: str = ""
    accu_var: str = ""
    iter_range: Node | None = None
    accu_init: Node | None = None
    loop_condition: Node | None = None
    loop_step: Node | None = None
    result: Node | None = None
    # filled from the checker
    type: Type = DYN
    ref_name: str = ""
    overloads: tuple[str, ...] = ()

    def children(self) -> list[Node]:
        out: list[Node] = []
        if self.target is not None:
            out.append(self.target)
        out.extend(self.args)
        for k, v, _ in self.entries:
            out.extend((k, v))
        for n in (self.iter_range, self.accu_init, self.loop_condition, self.loop_step, self.result):
            if n is not None:
                out.append(n)
        return out


class UInt(int):
    """A CEL `uint` value (Python ints are CEL `int`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


def _decode_constant(buf: bytes) -> Any:
    for number, _wire, value in _fields(buf):
        if number == 1:
            return None
        if number == 2:
            return bool(value)
        if number == 3:
            return _signed(value)
        if number == 4:
            return UInt(value)
        if number == 5:
            return struct.unpack("<d", value)[0]
        if number == 6:
            return value.decode()
        if number == 7:
            return bytes(value)
    return None


def _decode_expr(buf: bytes) -> Node:
    node = Node(0, "const")
    for number, _wire, value in _fields(buf):
        if number == 2:
            node.id = value
        elif number == 3:
            node.kind, node.value = "const", _decode_constant(value)
        elif number == 4:
            node.kind = "ident"
            for n, _w, v in _fields(value):
                if n == 1:
                    node.name = v.decode()
        elif number == 5:
            node.kind = "select"
            for n, _w, v in _fields(value):
                if n == 1:
                    node.target = _decode_expr(v)
                elif n == 2:
                    node.name = v.decode()
                elif n == 3:
                    node.test_only = bool(v)
        elif number == 6:
            node.kind = "call"
            for n, _w, v in _fields(value):
                if n == 1:
                    node.target = _decode_expr(v)
                elif n == 2:
                    node.name = v.decode()
                elif n == 3:
                    node.args.append(_decode_expr(v))
        elif number == 7:
            node.kind = "list"
            opt: list[int] = []
            for n, w, v in _fields(value):
                if n == 1:
                    node.args.append(_decode_expr(v))
                elif n == 2:
                    if w == 2:
                        p = 0
                        while p < len(v):
                            x, p = _varint(v, p)
                            opt.append(x)
                    else:
                        opt.append(v)
            node.optional_indices = tuple(opt)
        elif number == 8:
            node.kind = "map"
            for n, _w, v in _fields(value):
                if n == 1:
                    node.name = v.decode()
                    node.kind = "struct"
                elif n == 2:
                    key = val = None
                    optional = False
                    for en, _ew, ev in _fields(v):
                        if en == 3:
                            key = _decode_expr(ev)
                        elif en == 2:
                            key = Node(0, "const", value=ev.decode())
                        elif en == 4:
                            val = _decode_expr(ev)
                        elif en == 5:
                            optional = bool(ev)
                    node.entries.append((key, val, optional))
        elif number == 9:
            node.kind = "comprehension"
            for n, _w, v in _fields(value):
                if n == 1:
                    node.iter_var = v.decode()
                elif n == 2:
                    node.iter_range = _decode_expr(v)
                elif n == 3:
                    node.accu_var = v.decode()
                elif n == 4:
                    node.accu_init = _decode_expr(v)
                elif n == 5:
                    node.loop_condition = _decode_expr(v)
                elif n == 6:
                    node.loop_step = _decode_expr(v)
                elif n == 7:
                    node.result = _decode_expr(v)
                elif n == 8:
                    node.iter_var2 = v.decode()
    return node


@dataclass
class CheckedAst:
    """Root node plus source positions (byte offsets per node id, line offsets)."""

    root: Node
    positions: dict[int, int]
    line_offsets: list[int]
    nodes: dict[int, Node]


def _map_entry(buf: bytes) -> tuple[int, bytes | int]:
    key, val = 0, b""
    for n, _w, v in _fields(buf):
        if n == 1:
            key = _signed(v) if isinstance(v, int) else v
        elif n == 2:
            val = v
    return key, val


def decode_checked(serialized: bytes) -> CheckedAst:
    """Decode `Expression.serialize()` output (an Any holding a CheckedExpr, or a ParsedExpr)."""
    payload = serialized
    parsed = False
    for number, _w, value in _fields(serialized):
        if number == 1:
            parsed = value.endswith(b"ParsedExpr")
        elif number == 2:
            payload = value
    if parsed:
        # ParsedExpr: expr = 2, source_info = 3 (renumbered to CheckedExpr's 4 and 5 below).
        renumbered = {2: 4, 3: 5}
        payload = b"".join(
            _field_bytes(renumbered.get(n, n), v) for n, w, v in _fields(payload) if w == 2
        )
    refs: dict[int, tuple[str, tuple[str, ...]]] = {}
    types: dict[int, Type] = {}
    positions: dict[int, int] = {}
    line_offsets: list[int] = []
    root = None
    for number, _w, value in _fields(payload):
        if number == 2:
            key, val = _map_entry(value)
            name, overloads = "", []
            for n, _w2, v in _fields(val):
                if n == 1:
                    name = v.decode()
                elif n == 3:
                    overloads.append(v.decode())
            refs[key] = (name, tuple(overloads))
        elif number == 3:
            key, val = _map_entry(value)
            types[key] = _decode_type(val)
        elif number == 4:
            root = _decode_expr(value)
        elif number == 5:
            for n, w, v in _fields(value):
                if n == 3:
                    if w == 2:
                        p = 0
                        while p < len(v):
                            x, p = _varint(v, p)
                            line_offsets.append(x)
                    else:
                        line_offsets.append(v)
                elif n == 4:
                    k, off = _map_entry(v)
                    positions[k] = off if isinstance(off, int) else 0
    if root is None:
        raise ValueError("serialized expression has no syntax tree")
    nodes: dict[int, Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        nodes[node.id] = node
        node.type = types.get(node.id, DYN)
        if node.id in refs:
            node.ref_name, node.overloads = refs[node.id]
        stack.extend(node.children())
    return CheckedAst(root, positions, line_offsets, nodes)
