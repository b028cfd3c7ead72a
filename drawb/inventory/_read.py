"""One ResourceSlice read into a block of device columns, with every problem named by field path.

Both ``resource.k8s.io/v1`` and the v1beta1 ``basic:`` device form are read; fields drawb does not
know are ignored. A bad value loses only itself: the device keeps its row and the problem is
reported as ``ResourceSlice '<name>' <field path>: <what is wrong>``.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from drawb.inventory._quantity import quantity_value

# Attribute value keys and the attribute type the frame reports for each.
ATTRIBUTE_TYPES = {
    "string": "string",
    "int": "int",
    "bool": "bool",
    "version": "version",
    "strings": "list",
    "ints": "list",
    "bools": "list",
    "versions": "list",
}
_SCALAR_PYTYPES = {"string": str, "version": str, "int": int, "bool": bool}
_LIST_ITEM_PYTYPES = {"strings": str, "versions": str, "ints": int, "bools": bool}
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

ALL_NODES = "<all nodes>"
PER_DEVICE = "<per device>"


@dataclass(slots=True)
class SliceHeader:
    """The slice-level fields of one ResourceSlice and where its device rows sit in the columns."""

    name: str
    driver: str
    pool: str
    generation: int
    count: int
    node: str | None
    shared_counters: Any = None
    start: int = 0
    rows: int = 0


def qualify(name: str, driver: str) -> str:
    """The fully qualified form of an attribute or capacity name (the driver is the default domain)."""
    return name if "/" in name else f"{driver}/{name}"


def describe(value: Any) -> str:
    """A short, quoted rendering of a bad value for messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def selector_text(selector: Any) -> str:
    """A readable one-line form of a NodeSelector: terms joined by ' | ', requirements by ', '."""
    terms = selector.get("nodeSelectorTerms") if isinstance(selector, dict) else None
    if not isinstance(terms, list):
        return "<selector: ?>"
    rendered = []
    for term in terms:
        parts = []
        if isinstance(term, dict):
            for key in ("matchExpressions", "matchFields"):
                for req in term.get(key) or ():
                    if isinstance(req, dict):
                        parts.append(_requirement_text(req))
        rendered.append(", ".join(parts) or "*")
    return "<selector: " + " | ".join(rendered) + ">"


def _requirement_text(req: dict) -> str:
    key, op, values = req.get("key", "?"), req.get("operator", "?"), req.get("values") or []
    if op == "In":
        return f"{key}={values[0]}" if len(values) == 1 else f"{key} in ({','.join(map(str, values))})"
    if op == "NotIn":
        return f"{key}!={values[0]}" if len(values) == 1 else f"{key} notin ({','.join(map(str, values))})"
    if op == "Exists":
        return str(key)
    if op == "DoesNotExist":
        return f"!{key}"
    if op in ("Gt", "Lt"):
        return f"{key} {'>' if op == 'Gt' else '<'} {values[0] if values else '?'}"
    return f"{key} {op} ({','.join(map(str, values))})"


def _node_of(spec: dict) -> tuple[str | None, bool]:
    """The node label of a slice or device spec and whether it named one at all."""
    name = spec.get("nodeName")
    if isinstance(name, str) and name:
        return name, True
    if spec.get("allNodes") is True:
        return ALL_NODES, True
    selector = spec.get("nodeSelector")
    if selector is not None:
        return selector_text(selector), True
    return None, False


def slice_name(obj: Any, position: int) -> str:
    """metadata.name of a slice, or a placeholder naming its position in the input."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else f"<item {position}>"


def read_header(obj: Any, position: int, problems: list[str]) -> SliceHeader | None:
    """The slice-level fields (driver, pool, node) of one ResourceSlice, or None when unusable."""
    name = slice_name(obj, position)
    where = f"ResourceSlice '{name}'"
    if not isinstance(obj, dict):
        problems.append(f"{where}: not an object but {type(obj).__name__}; left out")
        return None
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        problems.append(f"{where} spec: missing or not an object; slice left out")
        return None
    driver = spec.get("driver")
    if not isinstance(driver, str) or not driver:
        problems.append(f"{where} spec.driver: missing or not a string ({describe(driver)}); slice left out")
        return None
    pool = spec.get("pool")
    if not isinstance(pool, dict):
        problems.append(f"{where} spec.pool: missing or not an object; slice left out")
        return None
    pool_name = pool.get("name")
    if not isinstance(pool_name, str) or not pool_name:
        problems.append(f"{where} spec.pool.name: missing or not a string ({describe(pool_name)}); slice left out")
        return None
    generation = pool.get("generation", 0)
    if type(generation) is not int or generation < 0:
        problems.append(f"{where} spec.pool.generation: {describe(generation)} is not a non-negative integer; "
                        "read as 0")
        generation = 0
    count = pool.get("resourceSliceCount")
    if type(count) is not int or count < 1:
        problems.append(f"{where} spec.pool.resourceSliceCount: {describe(count)} is not a positive integer; "
                        "read as 1")
        count = 1
    if spec.get("perDeviceNodeSelection") is True:
        node: str | None = PER_DEVICE
    else:
        node, named = _node_of(spec)
        if not named:
            problems.append(f"{where} spec: none of nodeName, nodeSelector, allNodes, perDeviceNodeSelection is set")
    return SliceHeader(name, driver, pool_name, generation, count, node, spec.get("sharedCounters"))


def device_list(obj: dict, header: SliceHeader, problems: list[str]) -> list:
    """spec.devices of a slice whose header was read (empty when absent or not a list)."""
    devices = obj["spec"].get("devices")
    if devices is None:
        return []
    if not isinstance(devices, list):
        problems.append(f"ResourceSlice '{header.name}' spec.devices: not a list but {type(devices).__name__}")
        return []
    return devices


class DeviceColumns:
    """Device rows of many slices gathered as whole-frame columns (Python lists, filled in one pass)."""

    def __init__(self, size: int, problems: list[str]) -> None:
        self.size = size  # an upper bound of the number of rows
        self.problems = problems
        self.headers: list[SliceHeader] = []
        self.devices: list[str] = []
        self.spec_index: list[int] = []
        self.allow_multi: list[bool | None] = []
        self.taints: list[Any] = []
        self.consumes: list[Any] = []
        self.policies: list[Any] = []
        self.node_of_row: dict[int, str | None] = {}
        self._attrs: dict[str, dict[str, list]] = {}  # driver -> raw key -> [value key, values]
        self._caps: dict[str, dict[str, list]] = {}  # driver -> raw key -> quantity strings
        self.attrs: dict[str, list] = {}  # qualified name -> [value key, values], after finish()
        self.caps: dict[str, list] = {}  # qualified name -> quantity strings, after finish()

    @property
    def n(self) -> int:
        """Number of device rows."""
        return len(self.devices)

    def add(self, header: SliceHeader, devices: list) -> None:
        """Append the devices of one slice (the hot loop: keep it flat)."""
        where = f"ResourceSlice '{header.name}' spec.devices"
        driver = header.driver
        problems = self.problems
        size = self.size
        names = self.devices
        spec_index = self.spec_index
        allow_multi = self.allow_multi
        taints = self.taints
        consumes = self.consumes
        policies = self.policies
        acols = self._attrs.setdefault(driver, {})
        ccols = self._caps.setdefault(driver, {})
        per_device_node = header.node == PER_DEVICE
        scalar_types = _SCALAR_PYTYPES
        header.start = len(names)
        for i, dev in enumerate(devices):
            if type(dev) is not dict:
                problems.append(f"{where}[{i}]: not an object but {type(dev).__name__}; device left out")
                continue
            basic = dev.get("basic")
            if basic is not None:
                if type(basic) is not dict:
                    problems.append(f"{where}[{i}].basic: not an object; device left out")
                    continue
                dev = {**basic, "name": dev.get("name")}
            name = dev.get("name")
            if type(name) is not str or not name:
                problems.append(f"{where}[{i}].name: missing or not a string ({describe(name)}); device left out")
                continue
            row = len(names)
            names.append(name)
            spec_index.append(i)
            if per_device_node:
                self.node_of_row[row] = _node_of(dev)[0]
            am = dev.get("allowMultipleAllocations", False)
            if type(am) is not bool:
                problems.append(f"{where}[{i}].allowMultipleAllocations: {describe(am)} is not a boolean")
                am = None
            allow_multi.append(am)
            taints.append(dev.get("taints"))
            consumes.append(dev.get("consumesCounters"))
            policies.append(None)

            attrs = dev.get("attributes")
            if attrs:
                if type(attrs) is not dict:
                    problems.append(f"{where}[{i}].attributes: not a map but {type(attrs).__name__}; "
                                    "attributes left out")
                else:
                    for key, wrapped in attrs.items():
                        try:
                            (kind,) = wrapped
                            value = wrapped[kind]
                        except (TypeError, ValueError, KeyError):
                            problems.append(_bad_attribute(where, i, key, wrapped))
                            continue
                        pytype = scalar_types.get(kind)
                        if pytype is None or type(value) is not pytype:
                            value = _check_unusual(where, i, key, kind, value, problems)
                            if value is None:
                                continue
                        elif pytype is int and not _INT64_MIN <= value <= _INT64_MAX:
                            problems.append(f"{where}[{i}].attributes.{key}.int: {value} is out of the int64 range; "
                                            "attribute left out")
                            continue
                        col = acols.get(key)
                        if col is None:
                            col = acols[key] = [kind, [None] * size]
                        elif col[0] != kind:
                            problems.append(f"{where}[{i}].attributes.{key}: {kind} value {describe(value)}, but "
                                            f"other devices publish {qualify(key, driver)} as {col[0]}; "
                                            "value left out")
                            continue
                        col[1][row] = value
            caps = dev.get("capacity")
            if caps:
                if type(caps) is not dict:
                    problems.append(f"{where}[{i}].capacity: not a map but {type(caps).__name__}; capacity left out")
                else:
                    for key, cap in caps.items():
                        if type(cap) is dict:
                            text = cap.get("value")
                            policy = cap.get("requestPolicy")
                            if policy is not None:
                                if policies[row] is None:
                                    policies[row] = {}
                                policies[row][qualify(key, driver)] = policy
                        else:
                            text = cap  # v1alpha3 published the bare quantity
                        if type(text) is not str:
                            problems.append(f"{where}[{i}].capacity.{key}.value: {describe(text)} is not a "
                                            "quantity string; value left out")
                            continue
                        col = ccols.get(key)
                        if col is None:
                            col = ccols[key] = [None] * size
                        col[row] = text
        header.rows = len(names) - header.start
        self.headers.append(header)

    def finish(self) -> None:
        """Qualify column names, merge columns that meet under one name, blank values that are not quantities."""
        n = self.n
        for driver, columns in self._attrs.items():
            for key, (kind, values) in columns.items():
                del values[n:]
                qualified = qualify(key, driver)
                seen = self.attrs.get(qualified)
                if seen is None:
                    self.attrs[qualified] = [kind, values]
                else:
                    self._merge(qualified, seen, kind, values)
        for driver, columns in self._caps.items():
            for key, values in columns.items():
                del values[n:]
                if not self._blank_bad_quantities(key, values):
                    continue
                qualified = qualify(key, driver)
                seen = self.caps.get(qualified)
                if seen is None:
                    self.caps[qualified] = values
                else:
                    self._merge(qualified, ["capacity", seen], "capacity", values)
        self._attrs, self._caps = {}, {}

    def _blank_bad_quantities(self, key: str, texts: list[str | None]) -> bool:
        """Report and blank capacity values that are not quantities; False when none is left."""
        bad = {t for t in set(texts) if t is not None and quantity_value(t) is None}
        if not bad:
            return True
        for row, text in enumerate(texts):
            if text in bad:
                self.problems.append(f"{self.where(row)}.capacity.{key}.value: {text!r} is not a quantity "
                                     "(like 80Gi, 40G, 500m or 1e3); value left out")
                texts[row] = None
        return texts.count(None) != len(texts)

    def _merge(self, qualified: str, seen: list, kind: str, values: list) -> None:
        """Fill a column's gaps from another driver's column of the same qualified name."""
        target = seen[1]
        for row, value in enumerate(values):
            if value is None:
                continue
            if kind != seen[0]:
                self.problems.append(f"{self.where(row)}.attributes: {qualified} is {kind} here but {seen[0]} "
                                     "on other devices; value left out")
            elif target[row] is None:
                target[row] = value

    def where(self, row: int) -> str:
        """``ResourceSlice 'name' spec.devices[i]`` for a row."""
        starts = [h.start for h in self.headers]
        header = self.headers[bisect_right(starts, row) - 1]
        return f"ResourceSlice '{header.name}' spec.devices[{self.spec_index[row]}]"

    def nodes(self) -> list[str | None]:
        """The node label of every row."""
        nodes: list[str | None] = []
        for h in self.headers:
            nodes.extend([h.node] * h.rows)
        for row, node in self.node_of_row.items():
            nodes[row] = node
        return nodes


def _bad_attribute(where: str, i: int, key: str, wrapped: Any) -> str:
    if isinstance(wrapped, dict):
        kinds = ", ".join(sorted(map(str, wrapped))) or "none"
        return (f"{where}[{i}].attributes.{key}: must have exactly one of int, bool, string, version "
                f"(or a list form), has {kinds}; attribute left out")
    return f"{where}[{i}].attributes.{key}: not an object but {describe(wrapped)}; attribute left out"


def _check_unusual(where: str, i: int, key: str, kind: Any, value: Any, problems: list[str]) -> Any:
    """Validate a list-typed attribute value, or report a wrong value type; None means left out."""
    path = f"{where}[{i}].attributes.{key}.{kind}"
    item_type = _LIST_ITEM_PYTYPES.get(kind)
    if item_type is not None:
        if type(value) is not list:
            problems.append(f"{path}: {describe(value)} is not a list; attribute left out")
            return None
        for j, item in enumerate(value):
            if type(item) is not item_type:
                problems.append(f"{path}[{j}]: {describe(item)} is not a {kind[:-1]}; attribute left out")
                return None
        return value
    if kind in _SCALAR_PYTYPES:
        problems.append(f"{path}: {describe(value)} is not a {_SCALAR_PYTYPES[kind].__name__}; attribute left out")
        return None
    problems.append(f"{where}[{i}].attributes.{key}: unknown value type {describe(kind)}; attribute left out")
    return None
