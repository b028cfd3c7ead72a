"""A quick yes/no answer to "does this document fit its strict schema?", compiled once per kind.

jsonschema walks a document through the schema's ``$ref``s at about a millisecond per claim; a file of
10,000 claims would spend seconds there although nearly every document fits. The strict Kubernetes schemas
use few keywords (``type``, ``properties``, ``additionalProperties``, ``items``, ``required``, ``enum``,
``oneOf``, ``$ref``; ``format`` and the ``x-kubernetes-*`` annotations are not checked), so each schema
compiles into nested Python checks that answer only valid or not. A valid answer is final; for an invalid
one the caller asks jsonschema, whose findings (paths and wording) are the ones users see. A schema with any
other keyword compiles to None, and jsonschema judges every document of that kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]
_IGNORED = {"description", "format", "default", "$schema", "$id", "$defs"}
_TYPES: dict[str, Check] = {
    "string": lambda x: isinstance(x, str),
    "integer": lambda x: (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer()),
    "number": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
    "boolean": lambda x: isinstance(x, bool),
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "null": lambda x: x is None,
}


class _Unsupported(Exception):
    """The schema uses a keyword the quick check does not model."""


def compile_check(schema: Mapping[str, Any], definitions: Mapping[str, Any]) -> Check | None:
    """``check(document) -> bool`` for ``schema`` (its ``$ref``s point into ``definitions``' ``$defs``), or None."""
    compiled: dict[str, Check | None] = {}
    defs = definitions.get("$defs") or {}

    def ref(target: str) -> Check:
        name = target.rpartition("/")[2]
        if name not in defs:
            raise _Unsupported(target)
        if name not in compiled:
            compiled[name] = None  # a recursive reference finds the check at run time
            compiled[name] = node(defs[name])
        return lambda x: compiled[name](x)  # type: ignore[misc]

    def node(schema: Mapping[str, Any]) -> Check:
        checks: list[Check] = []
        for key, value in schema.items():
            if key in _IGNORED or key.startswith("x-kubernetes-"):
                continue
            if key == "type":
                checks.append(_type(value))
            elif key == "$ref":
                checks.append(ref(value))
            elif key == "enum":
                checks.append(_enum(value))
            elif key == "required":
                names = tuple(value)
                checks.append(lambda x, names=names: not isinstance(x, dict) or all(n in x for n in names))
            elif key == "items":
                item = node(value)
                checks.append(lambda x, item=item: not isinstance(x, list) or all(item(v) for v in x))
            elif key == "oneOf":
                options = [node(s) for s in value]
                checks.append(lambda x, options=options: sum(1 for o in options if o(x)) == 1)
            elif key in ("properties", "additionalProperties"):
                continue
            else:
                raise _Unsupported(key)
        if "properties" in schema or "additionalProperties" in schema:
            checks.append(_object(schema, node))
        if len(checks) == 1:
            return checks[0]
        return lambda x: all(c(x) for c in checks)

    try:
        return node(schema)
    except (_Unsupported, TypeError, AttributeError):
        return None


def _type(value: str | list[str]) -> Check:
    names = [value] if isinstance(value, str) else list(value)
    if any(n not in _TYPES for n in names):
        raise _Unsupported(f"type {value}")
    tests = [_TYPES[n] for n in names]
    return tests[0] if len(tests) == 1 else lambda x: any(t(x) for t in tests)


def _enum(values: list[Any]) -> Check:
    if not all(isinstance(v, str) for v in values):
        raise _Unsupported("enum of non-strings")
    allowed = frozenset(values)
    return lambda x: isinstance(x, str) and x in allowed


def _object(schema: Mapping[str, Any], node: Callable[[Mapping[str, Any]], Check]) -> Check:
    properties = {name: node(sub) for name, sub in (schema.get("properties") or {}).items()}
    extra = schema.get("additionalProperties", True)
    if extra is True:
        other: Check | None = None
    elif extra is False:
        other = lambda x: False  # noqa: E731
    elif isinstance(extra, Mapping):
        other = node(extra)
    else:
        raise _Unsupported(f"additionalProperties {extra!r}")

    def check(x: Any) -> bool:
        if not isinstance(x, dict):
            return True
        for key, value in x.items():
            known = properties.get(key)
            if known is not None:
                if not known(value):
                    return False
            elif other is not None and not other(value):
                return False
        return True

    return check
