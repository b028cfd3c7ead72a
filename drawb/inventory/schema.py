"""The device frame's column names, in one place: every reader and writer of the frame uses these.

Columns, in order: the identity columns; one per attribute, named by the attribute's fully
qualified name (``gpu.nvidia.com/productName``); two per capacity, ``capacity:<qualified name>``
(the published quantity) and ``capacity:<qualified name>:value`` (its exact value); then the
trailing columns. A name without a domain is in the driver's domain, as the scheduler reads it.
No pandas here: the CEL package and the allocator import this module too.
"""

from __future__ import annotations

IDENTITY = ["node", "driver", "pool", "slice", "device"]
ALLOW_MULTIPLE = "allow_multiple_allocations"
TRAILING = [
    ALLOW_MULTIPLE,
    "taints",
    "consumes_counters",
    "request_policy",
    "pool_complete",
    "claim",
    "request",
    "reserved_for",
]
CAPACITY_PREFIX = "capacity:"
VALUE_SUFFIX = ":value"

# Attribute value keys of a ResourceSlice device (``{"int": 3}``) and the type the frame reports for each.
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
LIST_KINDS = ("ints", "bools", "strings", "versions")


def split_name(name: str, driver: str) -> tuple[str, str]:
    """An attribute or capacity name's (domain, id): split at the first ``/``; a bare name is in the driver's domain."""
    domain, sep, ident = name.partition("/")
    if not sep:
        return driver, name
    return domain, ident


def qualify(name: str, driver: str) -> str:
    """The fully qualified form of an attribute or capacity name (the driver is the default domain)."""
    return name if "/" in name else f"{driver}/{name}"


def published_name(qualified: str, driver: str) -> str:
    """The name as the driver most likely published it: bare in its own domain, else qualified."""
    domain, ident = split_name(qualified, driver)
    return ident if domain == driver else qualified


def domain_of(qualified: str) -> str:
    """The domain of a fully qualified name (``gpu.nvidia.com`` of ``gpu.nvidia.com/memory``)."""
    return qualified.partition("/")[0]


def capacity_column(qualified: str) -> str:
    """The column of a capacity's published quantity (``capacity:gpu.nvidia.com/memory``)."""
    return CAPACITY_PREFIX + qualified


def capacity_value_column(qualified: str) -> str:
    """The column of a capacity's exact value in base units (``capacity:gpu.nvidia.com/memory:value``)."""
    return CAPACITY_PREFIX + qualified + VALUE_SUFFIX


def is_capacity_column(column: str) -> bool:
    """Whether ``column`` is a capacity's quantity column (not its ``:value`` twin)."""
    return column.startswith(CAPACITY_PREFIX) and not column.endswith(VALUE_SUFFIX)


def capacity_name(column: str) -> str:
    """The qualified capacity name of a ``capacity:`` column (its quantity or its value column)."""
    return column.removeprefix(CAPACITY_PREFIX).removesuffix(VALUE_SUFFIX)
