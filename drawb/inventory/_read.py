"""ResourceSlices read into whole-frame device columns, with every problem named by its field path.

Both ``resource.k8s.io/v1`` and the v1beta1 ``basic:`` device form are read; fields drawb does not
know are ignored. A bad value loses only itself: the device keeps its row and the problem is
reported as ``ResourceSlice '<name>' <field path>: <what is wrong>``.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from drawb.inventory._quantity import quantity_value
from drawb.inventory.schema import qualify
_SCALAR_PYTYPES = {"string": str, "version": str, "int": int, "bool": bool}
_LIST_ITEM_PYTYPES = {"strings": str, "versions": str, "ints": int, "bools": bool}
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

_PLAIN_DEVICE_KEYS = frozenset({"name", "attributes", "capacity"})

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


def list_items(objects: Any) -> list:
    """The items of a list response (``{"items": [...]}``), or the objects themselves as a list."""
    if isinstance(objects, dict) and "items" in objects:
        return objects["items"] or []
    return list(objects or [])


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
        # Fields few devices have, by row: allowMultipleAllocations when not false (None: invalid),
        # taints, consumesCounters, and {qualified capacity name: requestPolicy}.
        self.allow_multi: dict[int, bool | None] = {}
        self.taints: dict[int, Any] = {}
        self.consumes: dict[int, Any] = {}
        self.policies: dict[int, dict] = {}
        self.node_of_row: dict[int, str | None] = {}
        self._attrs: dict[str, dict[str, list]] = {}  # driver -> raw key -> [value key, values]
        self._caps: dict[str, dict[str, list]] = {}  # driver -> raw key -> quantity strings
        self.attrs: dict[str, list] = {}  # qualified name -> [value key, values], after finish()
        self.caps: dict[str, list] = {}  # qualified name -> quantity strings, after finish()
        self.cap_values: dict[str, dict] = {}  # qualified name -> {quantity string: exact value}
        self._starts: list[int] = []  # first row of each header, for where()

    @property
    def n(self) -> int:
        """Number of device rows."""
        return len(self.devices)

    def add(self, header: SliceHeader, devices: list) -> None:
        """Append the devices of one slice (the hot loop: keep it flat; odd cases go to helpers)."""
        where = f"ResourceSlice '{header.name}' spec.devices"
        names = self.devices
        spec_index = self.spec_index
        acols = self._attrs.setdefault(header.driver, {})
        ccols = self._caps.setdefault(header.driver, {})
        per_device_node = header.node == PER_DEVICE
        plain = _PLAIN_DEVICE_KEYS
        header.start = len(names)
        for i, dev in enumerate(devices):
            usual = isinstance(dev, dict) and dev.keys() <= plain
            if not usual:
                dev = self._unusual_device(where, i, dev)
                if dev is None:
                    continue
            name = dev.get("name")
            if type(name) is not str or not name:
                self.problems.append(f"{where}[{i}].name: missing or not a string ({describe(name)}); "
                                     "device left out")
                continue
            row = len(names)
            names.append(name)
            spec_index.append(i)
            if not usual or per_device_node:
                self._device_fields(where, i, row, dev, per_device_node)

            attrs = dev.get("attributes")
            if attrs:
                if not isinstance(attrs, dict):
                    self.problems.append(f"{where}[{i}].attributes: not a map but {type(attrs).__name__}; "
                                         "attributes left out")
                else:
                    for key, wrapped in attrs.items():
                        col = acols.get(key)
                        if col is not None and isinstance(wrapped, dict) and len(wrapped) == 1:
                            value = wrapped.get(col[0])
                            if type(value) is col[2]:
                                col[1][row] = value
                                continue
                        try:
                            (kind,) = wrapped
                            value = wrapped[kind]
                        except (TypeError, ValueError, KeyError):
                            self.problems.append(_bad_attribute(where, i, key, wrapped))
                            continue
                        self._attribute(acols, header.driver, where, i, row, key, kind, value)
            caps = dev.get("capacity")
            if caps:
                if not isinstance(caps, dict):
                    self.problems.append(f"{where}[{i}].capacity: not a map but {type(caps).__name__}; "
                                         "capacity left out")
                else:
                    for key, cap in caps.items():
                        col = ccols.get(key)
                        if col is not None and isinstance(cap, dict) and len(cap) == 1:
                            text = cap.get("value")
                            if type(text) is str:
                                col[row] = text
                                continue
                        self._capacity(ccols, header.driver, where, i, row, key, cap)
        header.rows = len(names) - header.start
        self.headers.append(header)

    def _unusual_device(self, where: str, i: int, dev: Any) -> dict | None:
        """A device with fields beyond name/attributes/capacity: unwrap v1beta1 ``basic``; None if unusable."""
        if not isinstance(dev, dict):
            self.problems.append(f"{where}[{i}]: not an object but {type(dev).__name__}; device left out")
            return None
        basic = dev.get("basic")
        if basic is None:
            return dev
        if not isinstance(basic, dict):
            self.problems.append(f"{where}[{i}].basic: not an object; device left out")
            return None
        return {**basic, "name": dev.get("name")}

    def _device_fields(self, where: str, i: int, row: int, dev: dict, per_device_node: bool) -> None:
        """Record the fields most devices do not have (kept sparse: row -> value)."""
        if per_device_node:
            self.node_of_row[row] = _node_of(dev)[0]
        am = dev.get("allowMultipleAllocations", False)
        if am is not False:
            if type(am) is not bool:
                self.problems.append(f"{where}[{i}].allowMultipleAllocations: {describe(am)} is not a boolean")
                am = None
            self.allow_multi[row] = am
        taints = dev.get("taints")
        if taints is not None:
            self.taints[row] = taints
        consumes = dev.get("consumesCounters")
        if consumes is not None:
            self.consumes[row] = consumes

    def _attribute(self, acols: dict, driver: str, where: str, i: int, row: int, key: str, kind: Any,
                   value: Any) -> None:
        """Validate and store one attribute value that the fast branch did not take."""
        pytype = _SCALAR_PYTYPES.get(kind)
        if pytype is None or type(value) is not pytype:
            value = _check_unusual(where, i, key, kind, value, self.problems)
            if value is None:
                return
        elif pytype is int and not _INT64_MIN <= value <= _INT64_MAX:
            self.problems.append(f"{where}[{i}].attributes.{key}.int: {value} is out of the int64 range; "
                                 "attribute left out")
            return
        col = acols.get(key)
        if col is None:
            # The third item lets the hot loop store values of this type without checks (not ints:
            # they need a range check, nor lists: their items need one).
            fast_type = pytype if pytype in (str, bool) else None
            col = acols[key] = [kind, [None] * self.size, fast_type]
        elif col[0] != kind:
            self.problems.append(f"{where}[{i}].attributes.{key}: {kind} value {describe(value)}, but "
                                 f"other devices publish {qualify(key, driver)} as {col[0]}; value left out")
            return
        col[1][row] = value

    def _capacity(self, ccols: dict, driver: str, where: str, i: int, row: int, key: str, cap: Any) -> None:
        """Validate and store one capacity that the fast branch did not take (new column, policy, odd form)."""
        if isinstance(cap, dict):
            text = cap.get("value")
            policy = cap.get("requestPolicy")
            if policy is not None:
                self.policies.setdefault(row, {})[qualify(key, driver)] = policy
        else:
            text = cap  # v1alpha3 published the bare quantity
        if type(text) is not str:
            self.problems.append(f"{where}[{i}].capacity.{key}.value: {describe(text)} is not a quantity string; "
                                 "value left out")
            return
        col = ccols.get(key)
        if col is None:
            col = ccols[key] = [None] * self.size
        col[row] = text

    def finish(self) -> None:
        """Qualify column names, merge columns that meet under one name, blank values that are not quantities."""
        n = self.n
        for driver, columns in sorted(self._attrs.items()):
            for key, (kind, values, _) in sorted(columns.items()):
                del values[n:]
                qualified = qualify(key, driver)
                seen = self.attrs.get(qualified)
                if seen is None:
                    self.attrs[qualified] = [kind, values]
                else:
                    self._merge(qualified, seen, kind, values)
        for driver, columns in sorted(self._caps.items()):
            for key, values in sorted(columns.items()):
                del values[n:]
                table = self._blank_bad_quantities(key, values)
                if table is None:
                    continue
                qualified = qualify(key, driver)
                self.cap_values.setdefault(qualified, {}).update(table)
                seen = self.caps.get(qualified)
                if seen is None:
                    self.caps[qualified] = values
                else:
                    self._merge(qualified, ["capacity", seen], "capacity", values)
        self._attrs, self._caps = {}, {}

    def _blank_bad_quantities(self, key: str, texts: list[str | None]) -> dict | None:
        """Report and blank capacity values that are not quantities; their values, or None when none is left."""
        table = {t: quantity_value(t) for t in set(texts) if t is not None}
        bad = {t for t, v in table.items() if v is None}
        if not bad:
            return table
        for row, text in enumerate(texts):
            if text in bad:
                self.problems.append(f"{self.where(row)}.capacity.{key}.value: {text!r} is not a quantity "
                                     "(like 80Gi, 40G, 500m or 1e3); value left out")
                texts[row] = None
        return None if texts.count(None) == len(texts) else {t: v for t, v in table.items() if v is not None}

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
        if len(self._starts) != len(self.headers):
            self._starts = [h.start for h in self.headers]
        header = self.headers[bisect_right(self._starts, row) - 1]
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
        if not isinstance(value, list):
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


def read_columns(current: list[tuple[SliceHeader, list]], problems: list[str]) -> DeviceColumns:
    """The finished device columns of the given slices and their device lists."""
    columns = DeviceColumns(sum(len(devices) for _, devices in current), problems)
    for header, devices in current:
        columns.add(header, devices)
    columns.finish()
    return columns
