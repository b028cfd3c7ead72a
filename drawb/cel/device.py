"""The CEL ``device`` variable, in one place: its declared types, its declared sizes, and its value.

The value is built either from a ResourceSlice device entry (`from_json`, as the scheduler's
DeviceMatches does) or from the cells of a device frame row (`from_row`, for the vectorized
evaluator); both convert attribute values with `attribute_value` and report a value the scheduler
cannot convert the same way (``attribute <name>: <why>``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from drawb.api.quantity import Quantity, QuantityError
from drawb.api.semver import Semver, SemverError
from drawb.cel.decls import B, DEVICE, QUANTITY, S, T
from drawb.cel.values import CelError, DefaultMap, QuantityValue, SemverValue
from drawb.inventory.schema import LIST_KINDS, published_name, split_name

if TYPE_CHECKING:
    from cel_expr_python import cel

    from drawb.cel.spec import EnvSpec

# The names the checker declares: `device` and, as qualified variables, each of its fields.
FIELDS = ("driver", "attributes", "capacity", "allowMultipleAllocations")
_SCALAR_KINDS = ("int", "bool", "string", "version")


def declarations(spec: EnvSpec) -> dict[str, cel.Type]:
    """The variables the checker knows: `device` and its fields, typed as the API server declares them."""
    attribute = T.DYN if spec.list_attributes else T("any")
    out = {
        "device": DEVICE,
        "device.driver": S,
        "device.attributes": T.Map(S, T.Map(S, attribute)),
        "device.capacity": T.Map(S, T.Map(S, QUANTITY)),
    }
    if spec.allow_multiple_allocations:
        out["device.allowMultipleAllocations"] = B
    return out


# --- declared sizes (the API server's cost estimator reads them) ------------------------------

@dataclass
class Declared:
    """A declared field's most elements (cel's DeclType.MaxElements) and what is below it."""

    max: int
    fields: dict[str, Declared] = field(default_factory=dict)
    key: Declared | None = None
    elem: Declared | None = None
    is_attribute: bool = False


def _declared_device() -> Declared:
    """DRA's sizeEstimator for the `device` variable."""
    attribute = Declared(64, is_attribute=True)
    inner_attrs = Declared(32, key=Declared(32), elem=attribute)
    inner_caps = Declared(32, key=Declared(32), elem=Declared(0))
    return Declared(
        0,
        fields={
            "driver": Declared(63),
            "attributes": Declared(32, key=Declared(63), elem=inner_attrs),
            "capacity": Declared(32, key=Declared(63), elem=inner_caps),
            "allowMultipleAllocations": Declared(1),
        },
    )


DECLARED = _declared_device()


def declared_size(path: list[str] | None) -> int | None:
    """The most elements of the value at ``path`` (``["device", "attributes", "@values", ...]``); None if undeclared.

    A map's keys are at ``@keys``, its values at ``@values`` (a list's items at ``@items``).
    """
    if not path or path[0] != "device":
        return None
    node = DECLARED
    for name in path[1:]:
        if name in ("@items", "@values"):
            if node.elem is None:
                return None
            node = node.elem
        elif name == "@keys":
            if node.key is None:
                return None
            node = node.key
        elif name in node.fields:
            node = node.fields[name]
        elif node.elem is not None and node.elem.is_attribute:
            node = node.elem
        else:
            return None
    return node.max


# --- values -----------------------------------------------------------------------------------

@lru_cache(maxsize=65_536)
def _parsed_version(text: str) -> SemverValue | CelError:
    try:
        return SemverValue(Semver.parse(text))
    except SemverError as err:
        return CelError(f"parse semantic version: {err}")


def parse_version(text: str) -> SemverValue:
    """A `version` attribute value, parsed strictly (memoized: inventories repeat few versions)."""
    parsed = _parsed_version(text)
    if isinstance(parsed, CelError):
        raise CelError(parsed.message)
    return parsed


def attribute_value(kind: str, raw: Any, spec: EnvSpec) -> Any:
    """One attribute value of ``kind`` (``int``, ``version``, ``strings``, ...) as the scheduler converts it.

    Raises CelError where it does: list values before the scheduler converts them, bad versions.
    """
    if kind in LIST_KINDS:
        if not spec.convert_list_attributes:
            raise CelError("unsupported attribute value")
        if kind == "versions":
            return [parse_version(str(x)) for x in raw]
        return [int(x) if kind == "ints" else bool(x) if kind == "bools" else str(x) for x in raw]
    if kind == "int":
        return int(raw)
    if kind == "bool":
        return bool(raw)
    if kind == "version":
        return parse_version(str(raw))
    return str(raw)


def _json_kind(attr: Mapping[str, Any], spec: EnvSpec) -> str:
    """Which value of a `DeviceAttribute` the scheduler reads (lists first once it converts them)."""
    kinds = (*LIST_KINDS, *_SCALAR_KINDS) if spec.convert_list_attributes else _SCALAR_KINDS
    for kind in kinds:
        if attr.get(kind) is not None:
            return kind
    raise CelError("unsupported attribute value")


def _quantity(value: Any) -> QuantityValue:
    q = value if isinstance(value, Quantity) else Quantity.parse(str(value))
    return QuantityValue(q)


def variable(driver: str, attributes: DefaultMap, capacity: DefaultMap, allow_multiple: bool) -> dict[str, Any]:
    """The evaluation variables: `device` and the qualified names of its fields."""
    return {
        "device": {"driver": driver, "attributes": attributes, "capacity": capacity,
                   "allowMultipleAllocations": allow_multiple},
        "device.driver": driver,
        "device.attributes": attributes,
        "device.capacity": capacity,
        "device.allowMultipleAllocations": allow_multiple,
    }


def from_json(device: Mapping[str, Any], driver: str, spec: EnvSpec) -> dict[str, Any]:
    """The `device` variable of one ResourceSlice ``spec.devices`` entry (raises CelError as DeviceMatches)."""
    attributes: DefaultMap = DefaultMap()
    for name, attr in (device.get("attributes") or {}).items():
        try:
            kind = _json_kind(attr, spec)
            value = attribute_value(kind, attr[kind], spec)
        except CelError as err:
            raise CelError(f"attribute {name}: {err.message}") from None
        domain, ident = split_name(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: DefaultMap = DefaultMap()
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = split_name(name, driver)
        try:
            value = _quantity(cap.get("value") if isinstance(cap, Mapping) else cap)
        except QuantityError as err:
            raise CelError(f"capacity {name}: {err}") from None
        capacity.setdefault(domain, {})[ident] = value
    return variable(driver, attributes, capacity, bool(device.get("allowMultipleAllocations") or False))


def from_row(
    driver: str,
    attributes: Iterable[tuple[str, Any]],
    capacity: Iterable[tuple[str, Any]],
    allow_multiple: bool = False,
) -> dict[str, Any]:
    """The `device` variable of one device frame row, from its cells already converted to CEL values.

    ``attributes`` and ``capacity`` are (qualified name, value) pairs: a value is a CEL value
    (`attribute_value`, a QuantityValue), None where the row has none, or the CelError its
    conversion raised, which is raised here with the name, as `from_json` does.
    """
    return variable(driver, _by_domain(attributes, driver, "attribute"), _by_domain(capacity, driver, "capacity"),
                    allow_multiple)


def _by_domain(cells: Iterable[tuple[str, Any]], driver: str, what: str) -> DefaultMap:
    """Cells (qualified name, CEL value) as ``{domain: {id: value}}``; a CelError cell is raised, named."""
    out: DefaultMap = DefaultMap()
    for qualified, value in cells:
        if value is None:
            continue
        if isinstance(value, CelError):
            raise CelError(f"{what} {published_name(qualified, driver)}: {value.message}")
        domain, ident = split_name(qualified, driver)
        out.setdefault(domain, {})[ident] = value
    return out
