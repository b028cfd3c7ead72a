"""Evaluate a compiled selector over a whole device frame at once, with the per-device results.

Each node of the checked tree evaluates to a *coded column*: an int array `codes` (one per row) and
a small `table` of CEL values or errors, so that row i's value is `table[codes[i]]`. Attribute and
capacity columns are factorized once; an operator runs the same scalar function the per-device
interpreter uses, but only on the distinct operand combinations that occur. Because every value is
computed by the per-device code, the results are identical to `Selector.matches` on every row.
One exception, for columns of many distinct values (UUIDs): a string attribute compared with a
string constant (`==`, `!=`) is one Arrow comparison over the column, whose result (a bool, or
the missing key's error) is what the strict operator gives on strings.
Subtrees that read the device in ways other than a fixed attribute or capacity (iterating the
maps, computed keys, comprehensions) run per device through the interpreter, once per distinct
device content (the CEL `device` variable depends only on driver, attributes, capacity and
allowMultipleAllocations, not on the node or the device name).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import pandas as pd

from drawb.cel import library
from drawb.cel.ast import Node
from drawb.cel.reads import DEVICE_MAPS, attribute_read, domain_ref
from drawb.cel.interp import COST_LIMIT, Compiler, Ctx
from drawb.cel.operators import (
    STRICT_OPERATORS,
    conditional,
    has_field,
    logical_and,
    logical_or,
    not_strictly_false,
)
from drawb.cel.device import attribute_value, from_row
from drawb.cel.selector import Selector, enhance_runtime_error, result_to_bool
from drawb.errors import PROG, DrawbError
from drawb.memo import Table
from drawb.cel.values import OPTIONAL_NONE, CelError, Optional, QuantityValue, quantity_of
from drawb.inventory.schema import (
    ALLOW_MULTIPLE,
    LIST_KINDS,
    capacity_column,
    capacity_name,
    domain_of,
    is_capacity_column,
    published_name,
)

PRESENCE = "presence:"  # a pseudo-column: which domains a device has in one of its maps
_PAIR_LIMIT = 1 << 22  # combine two coded columns by direct indexing up to this many code pairs


@dataclass
class Coded:
    """Row i's value is `table[codes[i]]`; a value may be a CelError."""

    codes: np.ndarray
    table: list

    def compact(self) -> Coded:
        """Drop table entries no row uses (keeps later pair tables small)."""
        used = np.bincount(self.codes, minlength=len(self.table)) > 0
        if used.all():
            return self
        remap = np.cumsum(used) - 1
        return Coded(remap[self.codes], [v for v, u in zip(self.table, used) if u])


def _const(n: int, value: Any) -> Coded:
    return Coded(np.zeros(n, dtype=np.intp), [value])


def _map1(c: Coded, fn: Callable[[Any], Any]) -> Coded:
    return Coded(c.codes, [_safe(fn, v) for v in c.table])


def _safe(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except CelError as err:
        return err
    except RecursionError:
        return CelError("max recursion depth exceeded")


def _combine(parts: list[Coded]) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Joint codes of several coded columns and, per joint code, the tuple of part codes."""
    codes = parts[0].codes
    keys: list[tuple[int, ...]] = [(i,) for i in range(len(parts[0].table))]
    seen = {id(parts[0].codes): 0}
    for position, part in enumerate(parts[1:], start=1):
        width = len(part.table)
        same = seen.get(id(part.codes))
        if width == 1:
            keys = [k + (0,) for k in keys]
            continue
        if same is not None:  # the same factorized column again: no new combinations
            keys = [k + (k[same],) for k in keys]
            continue
        seen[id(part.codes)] = position
        if len(keys) * width <= _PAIR_LIMIT:
            joint = codes * width + part.codes
            used = np.flatnonzero(np.bincount(joint, minlength=len(keys) * width))
            remap = np.full(len(keys) * width, -1, dtype=np.intp)
            remap[used] = np.arange(len(used))
            codes = remap[joint]
            keys = [keys[u // width] + (u % width,) for u in used]
        else:
            joint = codes.astype(np.int64) * width + part.codes
            uniq, codes = np.unique(joint, return_inverse=True)
            keys = [keys[u // width] + (int(u % width),) for u in uniq]
    return codes, keys


def _map_n(parts: list[Coded], fn: Callable[[list[Any]], Any]) -> Coded:
    if len(parts) == 1:
        return Coded(parts[0].codes, [fn([v]) for v in parts[0].table])
    codes, keys = _combine(parts)
    return Coded(codes, [fn([p.table[k] for p, k in zip(parts, key)]) for key in keys])


# --- reading the frame ----------------------------------------------------------------------


def _factorize(series: pd.Series) -> tuple[np.ndarray, list]:
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.intp)
    if isinstance(uniques.dtype, pd.StringDtype):  # 10x faster than iterating an Arrow-backed index
        table = uniques.to_numpy(dtype=object, na_value=None).tolist()
    else:
        table = [None if v is pd.NA else v for v in uniques]
    if (codes < 0).any():
        codes = np.where(codes < 0, len(table), codes)
    table.append(None)  # missing
    return codes, table


class IncompleteFrame(DrawbError, ValueError):
    """A frame given to select lacks columns of the device frame it came from."""


class FrameColumns:
    """Factorized columns of one frame, remembered for a few frames (``drawb.memo``; frames are treated
    as immutable, as drawb's inventory frames are: a change makes a new frame)."""

    _kept: Table[FrameColumns] = Table("factorized frame columns", 4)

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.n = len(frame)
        info = frame.attrs.get("drawb", {})
        self.attribute_types: dict[str, str] = dict(info.get("attributes", {}))
        self.capacities: list[str] = list(info.get("capacities", []))
        self.lists: dict[str, str] = dict(info.get("lists", {}))
        expected = [*self.attribute_types, *(capacity_column(c) for c in self.capacities), "driver"]
        missing = [c for c in expected if c not in frame.columns]
        if missing:
            raise IncompleteFrame(
                f"the frame lacks {len(missing)} of its inventory columns (e.g. {missing[0]!r}); select needs the "
                f"whole device frame (drawb.inventory.device_frame, `{PROG} devices --wide`), not a column subset"
            )
        self._codes: dict[str, tuple[np.ndarray, list]] = {}
        self._values: dict[str, list] = {}
        self._distinct: dict[tuple, Any] = {}
        self._present = set(frame.columns)

    @classmethod
    def of(cls, frame: pd.DataFrame) -> FrameColumns:
        """The (remembered) columns of `frame` (made again when rows were added or dropped in place)."""
        cached = cls._kept.get(frame)
        if cached is None or cached.n != len(frame):
            cached = cls._kept.put(frame, cls(frame))
        return cached

    def coded(self, column: str) -> tuple[np.ndarray, list]:
        """A column factorized: codes per row and the distinct values (None = missing)."""
        if column not in self._codes:
            series = self.frame[column]
            if series.dtype == object and len(series) and any(isinstance(v, list) for v in series[:50]):
                series = series.map(lambda v: tuple(v) if isinstance(v, list) else v)
            self._codes[column] = _factorize(series)
        return self._codes[column]

    def present(self, column: str) -> np.ndarray:
        """Which rows have a value in ``column`` (cached)."""
        key = ("present", column)
        if key not in self._distinct:
            self._distinct[key] = self.frame[column].notna().to_numpy(dtype=bool)
        return self._distinct[key]

    def equal(self, column: str, text: str) -> np.ndarray:
        """Per row: 1 where ``column`` equals ``text``, 0 where it differs, 2 where it is missing (cached)."""
        key = ("equal", column, text)
        if key not in self._distinct:
            same = (self.frame[column] == text).to_numpy(dtype=bool, na_value=False)
            self._distinct[key] = np.where(self.present(column), same.astype(np.intp), 2)
        return self._distinct[key]

    def _domains(self, which: str) -> dict[str, list[str]]:
        """Per domain, its attribute (or `capacity:`) columns."""
        names = self.attribute_types if which == "attributes" else [capacity_column(c) for c in self.capacities]
        out: dict[str, list[str]] = {}
        for column in sorted(names):
            if column in self._present:
                out.setdefault(domain_of(capacity_name(column)), []).append(column)
        return out

    def presence(self, which: str) -> tuple[np.ndarray, list]:
        """Coded column of the set of domains each row has in `device.<which>`."""
        key = ("presence", which)
        if key not in self._distinct:
            domains = self._domains(which)
            parts = []
            for columns in domains.values():
                present = np.zeros(self.n, dtype=bool)
                for c in columns:
                    present |= self.present(c)
                parts.append(Coded(present.astype(np.intp), [False, True]))
            if not parts:
                self._distinct[key] = (np.zeros(self.n, dtype=np.intp), [()])
            else:
                codes, keys = _combine(parts)
                names = list(domains)
                self._distinct[key] = (codes, [tuple(d for d, k in zip(names, ks) if k) for ks in keys])
        return self._distinct[key]

    def distinct_rows(self, columns: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Joint codes of the rows' values in `columns`, and one representative row per code (cached)."""
        if columns not in self._distinct:
            parts = [Coded(*(self.presence(c[len(PRESENCE):]) if c.startswith(PRESENCE) else self.coded(c))) for c in columns]
            codes, keys = _combine(parts)
            first_row = np.full(len(keys), -1, dtype=np.intp)
            order = np.arange(self.n)[::-1]
            first_row[codes[order]] = order
            self._distinct[columns] = (codes, first_row)
        return self._distinct[columns]

    def build_errors(self, spec: Any) -> Coded:
        """`build_errors` for this frame, cached per list-conversion rule."""
        key = ("build", spec.convert_list_attributes)
        if key not in self._distinct:
            self._distinct[key] = build_errors(self, spec)
        return self._distinct[key]

    def _converted(self, column: str, spec: Any) -> tuple[list[int], list]:
        """Row codes (as a list) and the column's distinct values as CEL values (None = absent)."""
        key = ("converted", column, spec.convert_list_attributes)
        if key not in self._distinct:
            codes, raw = self.coded(column)
            if is_capacity_column(column):
                table = [None if v is None else _safe(quantity_of, str(v)) for v in raw]
            elif column == ALLOW_MULTIPLE:
                table = [bool(v) if v is not None else False for v in raw]
            else:
                kind = self.kind(column)
                table = [None if v is None else _convert(kind, v, spec) for v in raw]
            self._distinct[key] = (codes.tolist(), table)
        return self._distinct[key]

    def _selected(self, only: set[str] | None) -> tuple[list[str], list[str], list[str]]:
        """The attribute columns and the capacities (qualified names) to read, and presence pseudo-columns."""
        key = ("selected", None if only is None else frozenset(only))
        if key not in self._distinct:
            presence = [c[len(PRESENCE) :] for c in only or () if c.startswith(PRESENCE)]
            attrs = [c for c in sorted(self.attribute_types) if only is None or c in only]
            caps = [
                q for q in self.capacities
                if capacity_column(q) in self._present and (only is None or capacity_column(q) in only)
            ]
            self._distinct[key] = (attrs, caps, presence)
        return self._distinct[key]

    def _cell(self, column: str, row: int, spec: Any) -> Any:
        codes, table = self._converted(column, spec)
        return table[codes[row]]

    def variables(self, row: int, only: set[str] | None, spec: Any) -> dict[str, Any]:
        """The `device` variable of one row (`device.from_row` of its converted cells; CelError as DeviceMatches)."""
        driver = self.values("driver")[row] or ""
        attr_cols, caps, presence = self._selected(only)
        allow = self._cell(ALLOW_MULTIPLE, row, spec) if ALLOW_MULTIPLE in self._present else False
        variables = from_row(
            driver,
            [(column, self._cell(column, row, spec)) for column in attr_cols],
            [(qualified, self._cell(capacity_column(qualified), row, spec)) for qualified in caps],
            allow,
        )
        for which in presence:
            # only the keys are read: a placeholder entry for each domain the row has
            target = variables[f"device.{which}"]
            codes, domains = self.presence(which)
            for domain in domains[codes[row]]:
                target.setdefault(domain, {"": True})
        return variables

    def values(self, column: str) -> list:
        """The column as a Python list, missing values as None (cached)."""
        if column not in self._values:
            codes, table = self.coded(column)
            self._values[column] = [table[c] for c in codes.tolist()]
        return self._values[column]

    def device(self, row: int, only: set[str] | None = None) -> tuple[dict, str]:
        """The device entry (JSON form) and driver of one row; see `row_device`."""
        driver = self.values("driver")[row] or ""
        attributes: dict[str, Any] = {}
        for column in sorted(self.attribute_types):
            if only is not None and column not in only:
                continue
            value = self.values(column)[row]
            if value is None:
                continue
            kind = self.kind(column)
            name = published_name(column, driver)
            if kind in LIST_KINDS:
                attributes[name] = {kind: list(value)}
            elif kind == "int":
                attributes[name] = {"int": int(value)}
            elif kind == "bool":
                attributes[name] = {"bool": bool(value)}
            elif kind == "version":
                attributes[name] = {"version": str(value)}
            else:
                attributes[name] = {"string": str(value)}
        capacity: dict[str, Any] = {}
        for qualified in self.capacities:
            column = capacity_column(qualified)
            if (only is not None and column not in only) or column not in self._present:
                continue
            value = self.values(column)[row]
            if value is not None:
                capacity[published_name(qualified, driver)] = {"value": str(value)}
        device: dict[str, Any] = {"name": self.values("device")[row] or "", "attributes": attributes}
        if capacity:
            device["capacity"] = capacity
        if ALLOW_MULTIPLE in self._present and self.values(ALLOW_MULTIPLE)[row]:
            device["allowMultipleAllocations"] = True
        return device, driver

    def kind(self, column: str) -> str | None:
        """string, int, bool, version, or the list kind (ints, bools, strings, versions)."""
        kind = self.attribute_types.get(column)
        if kind == "list":
            return self.lists.get(column, "strings")
        return kind

    def driver(self) -> Coded:
        """`device.driver` of every row."""
        codes, table = self.coded("driver")
        return Coded(codes, [v if v is not None else "" for v in table])


def _attribute_column(cols: FrameColumns, spec: Any, column: str, ident: str, optional: bool) -> Coded:
    kind = cols.kind(column)
    missing: Any = OPTIONAL_NONE if optional else CelError(f"no such key: {ident}")
    if kind is None:
        return _const(cols.n, missing)
    codes, raw = cols.coded(column)
    table = []
    for v in raw:
        if v is None:
            table.append(missing)
            continue
        value = _convert(kind, v, spec)
        table.append(Optional(value) if optional and not isinstance(value, CelError) else value)
    return Coded(codes, table)


def _convert(kind: str, v: Any, spec: Any) -> Any:
    """`attribute_value`, its CelError returned as the value."""
    try:
        return attribute_value(kind, v, spec)
    except CelError as err:
        return err


def _capacity_column(cols: FrameColumns, column: str, ident: str, optional: bool) -> Coded:
    missing: Any = OPTIONAL_NONE if optional else CelError(f"no such key: {ident}")
    name = capacity_column(column)
    if column not in cols.capacities or name not in cols.frame:
        return _const(cols.n, missing)
    codes, raw = cols.coded(name)
    table = []
    for v in raw:
        if v is None:
            table.append(missing)
            continue
        q = _safe(quantity_of, str(v))
        table.append(Optional(q) if optional and isinstance(q, QuantityValue) else q)
    return Coded(codes, table)


def _domain_present(cols: FrameColumns, which: str, domain: str) -> Coded:
    if which == "attributes":
        columns = [c for c in cols.attribute_types if domain_of(c) == domain]
    else:
        columns = [capacity_column(c) for c in cols.capacities if domain_of(c) == domain]
    present = np.zeros(cols.n, dtype=bool)
    for c in columns:
        present |= cols.frame[c].notna().to_numpy(dtype=bool)
    return Coded(present.astype(np.intp), [False, True])


# --- per-row device reconstruction (the fallback) -------------------------------------------


def row_device(frame: pd.DataFrame, row: int, only: set[str] | None = None) -> tuple[dict, str]:
    """The ResourceSlice device entry (JSON form) and driver of one frame row.

    With `only`, just those attribute columns and `capacity:` columns are included.
    """
    return FrameColumns.of(frame).device(row, only)


def _content_columns(cols: FrameColumns) -> list[str]:
    out = ["driver", *sorted(cols.attribute_types), *(capacity_column(c) for c in cols.capacities)]
    if ALLOW_MULTIPLE in cols.frame:
        out.append(ALLOW_MULTIPLE)
    return out


# --- the build errors DeviceMatches reports before evaluating -------------------------------


def build_errors(cols: FrameColumns, spec: Any) -> Coded:
    """Per row: None, or the attribute conversion error the scheduler reports for that device."""
    checks = [(c, cols.kind(c)) for c in sorted(cols.attribute_types) if cols.kind(c) not in ("string", "int", "bool")]
    result = _const(cols.n, None)
    if not checks:
        return result
    driver = cols.driver()
    for column, kind in checks:
        codes, raw = cols.coded(column)
        errors = []
        for v in raw:
            if v is None:
                errors.append(None)
                continue
            value = _convert(kind, v, spec)
            errors.append(value if isinstance(value, CelError) else None)
        if not any(errors):
            continue
        col = Coded(codes, errors)

        def pick(args: list[Any], column: str = column) -> Any:
            current, err, drv = args
            if current is not None or err is None:
                return current
            return f"attribute {published_name(column, drv)}: {err.message}"

        result = _map_n([result, col, driver], pick)
    return result


# --- the vectorized evaluator ---------------------------------------------------------------


class _Opaque(Exception):
    """This subtree reads the device in a way only the per-device interpreter handles."""


def _is_map_ident(node: Node) -> bool:
    return node.kind == "ident" and (node.ref_name or node.name) in DEVICE_MAPS


def device_columns(node: Node, cols: FrameColumns) -> set[str] | None:
    """The frame columns a subtree reads, or None when it reads the device maps as a whole."""
    out: set[str] = set()

    def column(which: str, domain: str, ident: str) -> str:
        qualified = f"{domain}/{ident}"
        return qualified if which == "attributes" else capacity_column(qualified)

    def walk(e: Node) -> bool:
        whole = domain_ref(e)
        if whole is not None:  # one domain's map as a value: all of that domain's columns
            which, domain = whole
            if which == "attributes":
                out.update(c for c in cols.attribute_types if domain_of(c) == domain)
            else:
                out.update(capacity_column(c) for c in cols.capacities if domain_of(c) == domain)
            return True
        if e.kind == "comprehension" and _is_map_ident(e.iter_range) and not e.iter_var2:
            # iterating a map's keys (the domains) depends only on which domains the device has
            out.add(PRESENCE + (e.iter_range.ref_name or e.iter_range.name)[len("device.") :])
            return all(walk(c) for c in (e.accu_init, e.loop_condition, e.loop_step, e.result))
        if e.kind == "call" and e.name == "size" and len(e.args) + (e.target is not None) == 1:
            operand = e.target if e.target is not None else e.args[0]
            if _is_map_ident(operand):
                out.add(PRESENCE + (operand.ref_name or operand.name)[len("device.") :])
                return True
        if e.kind == "ident":
            name = e.ref_name or e.name
            if name in DEVICE_MAPS or name == "device":
                return False
            if name == "device.allowMultipleAllocations":
                out.add(ALLOW_MULTIPLE)
            return True
        if e.kind == "select":
            ref = domain_ref(e.target)
            if ref is not None:
                out.add(column(ref[0], ref[1], e.name))
                return True
            if e.test_only and _is_map_ident(e.target):
                return True
        if e.kind == "call" and e.name in ("_[_]", "_?._", "_[?_]") and len(e.args) == 2:
            ref = domain_ref(e.args[0])
            key = e.args[1]
            if ref is not None and key.kind == "const" and isinstance(key.value, str):
                out.add(column(ref[0], ref[1], key.value))
                return True
        if e.kind == "call" and e.name == "@in" and len(e.args) == 2:
            item, container = e.args
            if item.kind == "const" and isinstance(item.value, str):
                ref = domain_ref(container)
                if ref is not None:
                    out.add(column(ref[0], ref[1], item.value))
                    return True
                if _is_map_ident(container):
                    which = (container.ref_name or container.name)[len("device.") :]
                    if which == "attributes":
                        out.update(c for c in cols.attribute_types if domain_of(c) == item.value)
                    else:
                        out.update(capacity_column(c) for c in cols.capacities if domain_of(c) == item.value)
                    return True
        return all(walk(c) for c in e.children())

    return out if walk(node) else None


def _count_comprehensions(node: Node) -> int:
    """Comprehensions not nested in another comprehension."""
    if node.kind == "comprehension":
        return 1
    return sum(_count_comprehensions(c) for c in node.children())


class Vectorizer:
    """Evaluates one selector's tree over the rows of a frame."""

    def __init__(self, selector: Selector, cols: FrameColumns) -> None:
        self.selector = selector
        self.spec = selector.spec
        self.cols = cols
        self.compiler = Compiler(self.spec)
        self.fallback_nodes = 0
        self._bound: dict[str, Coded] = {}  # a macro's accumulator while its loop is unrolled

    def run(self) -> Coded:
        """The selector's value (or error) on every row."""
        root = self.selector.ast.root
        if _count_comprehensions(root) > 1:
            # Runtime cost accumulates across comprehensions; evaluate them together, per device.
            return self.opaque(root)
        return self.eval(root)

    def eval(self, node: Node) -> Coded:
        """One node over every row, vectorized where possible, else per distinct device."""
        try:
            return self._eval(node)
        except _Opaque:
            return self.opaque(node)

    def _eval(self, node: Node) -> Coded:
        n = self.cols.n
        kind = node.kind
        if kind == "const":
            return _const(n, node.value)
        if kind == "ident":
            if node.name in self._bound:
                return self._bound[node.name]
            name = node.ref_name or node.name
            if name == "device.driver":
                return self.cols.driver()
            if name == "device.allowMultipleAllocations":
                if ALLOW_MULTIPLE not in self.cols.frame:
                    return _const(n, False)
                codes, raw = self.cols.coded(ALLOW_MULTIPLE)
                return Coded(codes, [bool(v) if v is not None else False for v in raw])
            raise _Opaque
        if kind == "select":
            ref = domain_ref(node.target)
            if ref is not None:
                which, domain = ref
                if node.test_only:
                    return self._present(which, domain, node.name)
                return self._column(which, domain, node.name, optional=False)
            if node.target.kind == "ident" and (node.target.ref_name or node.target.name) in DEVICE_MAPS:
                if node.test_only:
                    return _const(n, True)  # a missing domain reads as an empty map
            operand = self.eval(node.target)
            field = node.name
            if node.test_only:
                return _map1(operand, lambda v: has_field(v, field))
            return _map1(operand, lambda v: STRICT_OPERATORS["_[_]"](v, field))
        if kind == "call":
            return self._call(node)
        if kind == "comprehension":
            return self._domain_macro(node)
        raise _Opaque

    def _domain_macro(self, node: Node) -> Coded:
        """A macro over one domain's map (``device.attributes["d"].exists(k, device.attributes["d"][k] ...)``),
        unrolled over the keys the frame has in that domain, in the map's order: per key, the loop
        body with the key as a constant, vectorized, applied on the rows that have the key. Any
        part needing the per-device interpreter makes the whole macro go to it."""
        ref = domain_ref(node.iter_range) if node.iter_range is not None else None
        if ref is None or node.iter_var2 or node.accu_var in self._bound:
            raise _Opaque
        which, domain = ref
        if which == "attributes":
            keys = [c[len(domain) + 1:] for c in sorted(self.cols.attribute_types) if domain_of(c) == domain]
        else:
            keys = [q[len(domain) + 1:] for q in self.cols.capacities if domain_of(q) == domain]
        fallbacks = self.fallback_nodes
        accu = self.eval(node.accu_init)
        try:
            for key in keys:
                present = self._present(which, domain, key)
                self._bound[node.accu_var] = accu
                condition = self.eval(_with_constant(node.loop_condition, node.iter_var, key))
                step = self.eval(_with_constant(node.loop_step, node.iter_var, key))
                # CEL stops the loop where the condition is false; it reads only the accumulator,
                # so where it is false it stays false for the keys after.
                accu = _map_n([present, condition, step, accu],
                              lambda v: v[2] if v[0] and v[1] is True else v[3]).compact()
            self._bound[node.accu_var] = accu
            result = self.eval(node.result)
        finally:
            self._bound.pop(node.accu_var, None)
        if self.fallback_nodes != fallbacks:  # a part went per device: it could not see the accumulator
            self.fallback_nodes = fallbacks
            raise _Opaque
        return result

    def _present(self, which: str, domain: str, ident: str) -> Coded:
        column = f"{domain}/{ident}"
        if which == "attributes":
            if column not in self.cols.attribute_types:
                return _const(self.cols.n, False)
        else:
            if column not in self.cols.capacities:
                return _const(self.cols.n, False)
            column = capacity_column(column)
        return Coded(self.cols.present(column).astype(np.intp), [False, True])

    def _string_comparison(self, args: list[Node], equal: bool) -> Coded | None:
        """``<string attribute> == "text"`` (or ``!=``, either side) in one Arrow pass over the column,
        or None for any other comparison: a column of 100,000 distinct UUIDs is then neither
        factorized nor compared value by value. The values are those of the strict operator on every
        row: a bool where the device has the attribute, else the missing key's error."""
        for read, other in ((args[0], args[1]), (args[1], args[0])):
            if other.kind != "const" or type(other.value) is not str:
                continue
            ref = attribute_read(read)
            if ref is None:
                continue
            column = f"{ref[0]}/{ref[1]}"
            if self.cols.kind(column) != "string" or column not in self.cols.frame:
                continue
            codes = self.cols.equal(column, other.value)
            return Coded(codes, [not equal, equal, CelError(f"no such key: {ref[1]}")])
        return None

    def _column(self, which: str, domain: str, ident: str, optional: bool) -> Coded:
        column = f"{domain}/{ident}"
        if which == "attributes":
            return _attribute_column(self.cols, self.spec, column, ident, optional)
        return _capacity_column(self.cols, column, ident, optional)

    def _call(self, node: Node) -> Coded:
        name = node.name
        args = node.args
        # fixed attribute / capacity reads
        if name in ("_[_]", "_?._", "_[?_]") and len(args) == 2 and args[1].kind == "const":
            ref = domain_ref(args[0])
            key = args[1].value
            if ref is not None and isinstance(key, str):
                return self._column(ref[0], ref[1], key, optional=name != "_[_]")
            if args[0].kind == "ident" and (args[0].ref_name or args[0].name) in DEVICE_MAPS:
                if name != "_[_]" and isinstance(key, str):
                    raise _Opaque
        if name == "@in" and len(args) == 2 and args[0].kind == "const" and isinstance(args[0].value, str):
            ref = domain_ref(args[1])
            if ref is not None:
                return self._present(ref[0], ref[1], args[0].value)
            base = args[1]
            if base.kind == "ident" and (base.ref_name or base.name) in DEVICE_MAPS:
                return _domain_present(self.cols, (base.ref_name or base.name)[len("device.") :], args[0].value)
        if name in ("_==_", "_!=_") and len(args) == 2:
            compared = self._string_comparison(args, equal=name == "_==_")
            if compared is not None:
                return compared
        if name == "_&&_":
            return self._binary_nonstrict(args, logical_and)
        if name == "_||_":
            return self._binary_nonstrict(args, logical_or)
        if name == "_?_:_":
            parts = [self.eval(a) for a in args]
            return _map_n(parts, lambda v: _safe(conditional, *v))
        if name in ("@not_strictly_false", "not_strictly_false"):
            return _map1(self.eval(args[0]), not_strictly_false)
        operator = STRICT_OPERATORS.get(name)
        impl = operator if operator is not None else library.lookup(name, node, self.spec)
        operands = ([node.target] if node.target is not None else []) + list(args)
        if not operands:
            return _const(self.cols.n, _safe(impl))
        parts = [self.eval(a) for a in operands]
        return _map_n(parts, lambda v: _strict(impl, v))

    def _binary_nonstrict(self, args: list[Node], fn: Callable[[Any, Any], Any]) -> Coded:
        left = self.eval(args[0])
        right = self.eval(args[1])
        return _map_n([left, right], lambda v: _safe(fn, v[0], v[1])).compact()

    def opaque(self, node: Node) -> Coded:
        """Evaluate `node` per distinct device content with the interpreter."""
        self.fallback_nodes += 1
        program = self.compiler.compile(node)
        cols = self.cols
        only = device_columns(node, cols)
        if only is None:
            columns = _content_columns(cols)
        else:
            only = {c for c in only if c in cols.frame or c.startswith(PRESENCE)}
            columns = ["driver", *sorted(only)]
        codes, first_row = cols.distinct_rows(tuple(columns))
        table = []
        for row in first_row.tolist():
            try:
                variables = cols.variables(row, only, self.spec)
            except CelError as err:
                table.append(err)
                continue
            table.append(_safe(program, Ctx(variables, COST_LIMIT)))
        return Coded(codes, table)


def _with_constant(node: Node, name: str, value: str) -> Node:
    """A copy of the tree with the variable ``name`` replaced by the string constant ``value``."""
    if node.kind == "ident" and node.name == name:
        return replace(node, kind="const", value=value, name="", ref_name="")
    if node.kind == "comprehension":
        raise _Opaque  # a nested macro: left to the interpreter
    changes: dict[str, Any] = {}
    if node.target is not None:
        changes["target"] = _with_constant(node.target, name, value)
    if node.args:
        changes["args"] = [_with_constant(a, name, value) for a in node.args]
    if node.entries:
        changes["entries"] = [(_with_constant(k, name, value), _with_constant(v, name, value), o)
                              for k, v, o in node.entries]
    return replace(node, **changes) if changes else node


def _strict(impl: Callable[..., Any], values: list[Any]) -> Any:
    for v in values:
        if isinstance(v, CelError):
            return v
    return _safe(impl, *values)


# --- results --------------------------------------------------------------------------------


@dataclass
class Outcome:
    """Per row `codes`; per code: matched, has an error, and the error message."""

    codes: np.ndarray
    matched: np.ndarray
    failed: np.ndarray
    messages: np.ndarray


def outcome(selector: Selector, frame: pd.DataFrame) -> Outcome:
    """The selector's result on every row of `frame`, as a coded table."""
    cols = FrameColumns.of(frame)
    if cols.n == 0:
        empty = np.zeros(0, dtype=bool)
        return Outcome(np.zeros(0, dtype=np.intp), empty, empty, np.empty(0, dtype=object))
    result = Vectorizer(selector, cols).run()
    built = cols.build_errors(selector.spec)
    minor = selector.spec.minor
    if len(built.table) == 1 and built.table[0] is None:
        final = Coded(result.codes, [_final([None, v], minor) for v in result.table])
    else:
        final = _map_n([built, result], lambda values: _final(values, minor))
    return Outcome(
        final.codes,
        np.array([v is True for v in final.table], dtype=bool),
        np.array([isinstance(v, str) for v in final.table], dtype=bool),
        np.array([v if isinstance(v, str) else None for v in final.table], dtype=object),
    )


def _final(values: list[Any], minor: int) -> Any:
    build_error, value = values
    if build_error is not None:
        return enhance_runtime_error(build_error, minor)
    if isinstance(value, CelError):
        return enhance_runtime_error(value.message, minor)
    try:
        return result_to_bool(value)
    except CelError as err:
        return enhance_runtime_error(err.message, minor)
