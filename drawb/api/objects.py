"""Read Kubernetes objects as plain JSON dicts (camelCase, as the API server sends them).

Missing fields read as a default; a field of the wrong JSON type raises ObjectError naming the
object and the field path, e.g.
``ResourceSlice 'node-a-gpu' field spec.devices[3].attributes: expected a map, got list``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = [
    "ObjectError",
    "annotations",
    "api_version",
    "describe",
    "dig",
    "format_path",
    "get_list",
    "get_map",
    "get_str",
    "kind",
    "labels",
    "meta",
    "name",
    "namespace",
    "plain",
    "uid",
]

PathLike = str | Sequence[str | int]

_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_SEGMENT: Final = re.compile(r"([^.\[\]]+)|\[(\d+)\]|\[([^\]]*)\]")
_MISSING: Final = object()


class ObjectError(ValueError):
    """A Kubernetes object does not have the shape its kind requires."""

    def __init__(self, obj: Mapping[str, Any] | None, path: PathLike, problem: str) -> None:
        self.object = describe(obj) if obj is not None else "object"
        self.path = format_path(path)
        self.problem = problem
        where = f" field {self.path}" if self.path else ""
        super().__init__(f"{self.object}{where}: {problem}")


def json_type(value: object) -> str:
    """The JSON type name of a decoded value: map, list, string, bool, int, number or null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    if isinstance(value, Sequence):
        return "list"
    return type(value).__name__


@functools.lru_cache(maxsize=1024)
def _parse_path(path: str) -> tuple[str | int, ...]:
    parts: list[str | int] = []
    pos = 0
    for m in _SEGMENT.finditer(path):
        between = path[pos : m.start()]
        if between not in ("", "."):
            raise ValueError(f"malformed field path {path!r}")
        key, index, quoted = m.groups()
        parts.append(int(index) if index is not None else key if key is not None else quoted)
        pos = m.end()
    if path[pos:] not in ("",):
        raise ValueError(f"malformed field path {path!r}")
    return tuple(parts)


def _parts(path: PathLike) -> tuple[str | int, ...]:
    return _parse_path(path) if isinstance(path, str) else tuple(path)


def format_path(path: PathLike) -> str:
    """A field path as Kubernetes prints it: ``spec.devices[3].capacity[gpu.nvidia.com/memory]``."""
    out: list[str] = []
    for p in _parts(path):
        if isinstance(p, int):
            out.append(f"[{p}]")
        elif _IDENT.fullmatch(p):
            out.append(f".{p}" if out else p)
        else:
            out.append(f"[{p}]")
    return "".join(out)


def describe(obj: Mapping[str, Any]) -> str:
    """``Kind 'name'`` or ``Kind 'namespace/name'`` for messages."""
    m = obj.get("metadata") if isinstance(obj, Mapping) else None
    m = m if isinstance(m, Mapping) else {}
    k = obj.get("kind") if isinstance(obj, Mapping) else None
    n, ns = m.get("name"), m.get("namespace")
    label = f"{ns}/{n}" if ns and n else n or m.get("generateName") or "<unnamed>"
    return f"{k or 'object'} '{label}'"


def dig(obj: Mapping[str, Any], path: PathLike, default: Any = None) -> Any:
    """The value at ``path`` ("spec.devices[0].name" or a sequence of keys and indexes), else ``default``.

    Missing keys, out-of-range indexes and JSON nulls give ``default``; stepping into a value of
    the wrong type (a list where a map is needed, say) raises ObjectError.
    """
    parts = _parts(path)
    value: Any = obj
    for i, p in enumerate(parts):
        if isinstance(p, int):
            if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
                raise ObjectError(obj, parts[:i], f"expected a list, got {json_type(value)}")
            if p >= len(value):
                return default
            value = value[p]
        else:
            if not isinstance(value, Mapping):
                raise ObjectError(obj, parts[:i], f"expected a map, got {json_type(value)}")
            value = value.get(p, _MISSING)
            if value is _MISSING:
                return default
        if value is None:
            return default
    return value


def _typed(obj: Mapping[str, Any], path: PathLike, default: Any, types: tuple[type, ...], name: str) -> Any:
    value = dig(obj, path, _MISSING)
    if value is _MISSING:
        return default
    if not isinstance(value, types):
        raise ObjectError(obj, path, f"expected {name}, got {json_type(value)}")
    return value


def get_map(obj: Mapping[str, Any], path: PathLike) -> Mapping[str, Any]:
    """The map at ``path`` (empty if absent); ObjectError if it is something else."""
    return _typed(obj, path, {}, (Mapping,), "a map")


def get_list(obj: Mapping[str, Any], path: PathLike) -> Sequence[Any]:
    """The list at ``path`` (empty if absent); ObjectError if it is something else."""
    return _typed(obj, path, [], (list, tuple), "a list")


def get_str(obj: Mapping[str, Any], path: PathLike, default: str | None = None) -> str | None:
    """The string at ``path`` (``default`` if absent); ObjectError if it is something else."""
    return _typed(obj, path, default, (str,), "a string")


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``metadata`` (empty if absent)."""
    return get_map(obj, ("metadata",))


def name(obj: Mapping[str, Any]) -> str | None:
    """``metadata.name``."""
    return get_str(obj, ("metadata", "name"))


def namespace(obj: Mapping[str, Any]) -> str | None:
    """``metadata.namespace`` (None for cluster-scoped objects)."""
    return get_str(obj, ("metadata", "namespace"))


def uid(obj: Mapping[str, Any]) -> str | None:
    """``metadata.uid``."""
    return get_str(obj, ("metadata", "uid"))


def labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.labels`` (empty if absent)."""
    return get_map(obj, ("metadata", "labels"))


def annotations(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.annotations`` (empty if absent)."""
    return get_map(obj, ("metadata", "annotations"))


def kind(obj: Mapping[str, Any]) -> str | None:
    """``kind`` (list items from the API server often lack it)."""
    return get_str(obj, ("kind",))


def api_version(obj: Mapping[str, Any]) -> str | None:
    """``apiVersion``."""
    return get_str(obj, ("apiVersion",))


@functools.cache
def _api_client() -> Any:
    from kubernetes.client import ApiClient

    return ApiClient()


def plain(obj: Any) -> Any:
    """A plain JSON value: dicts pass through; ``kubernetes`` client models become camelCase dicts."""
    if obj is None or isinstance(obj, (Mapping, str, int, float, bool)):
        return obj
    if isinstance(obj, Sequence):
        return [plain(x) for x in obj]
    if hasattr(obj, "openapi_types") and hasattr(obj, "attribute_map"):
        return _api_client().sanitize_for_serialization(obj)
    raise TypeError(f"cannot turn {type(obj).__name__} into a JSON value")
