"""Stored objects' trees: read-only once stored, and copied to be changed.

The simulated store hands out the objects it holds, as a real cluster's informer store does, and they
are read-only in fact: ``freeze`` turns a decoded JSON tree into ``StoredDict``/``StoredList``
containers, which read as dicts and lists do (the same C lookups; ``orjson``, ``json``, YAML and pandas
take them as dicts and lists) and raise ``ReadOnlyObject`` on any change. ``copy_tree`` (or
``copy.deepcopy``) gives a plain, changeable copy. A frozen container holds only frozen containers, so
``freeze`` stops at one. A SimCluster pickles and reads back its stored objects (``opened_for_loading``);
to pickle a stored object on its own, pickle a copy.
"""

from __future__ import annotations

import copy
import copyreg
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import yaml

from drawb.errors import DrawbError

_SHARED = frozenset({str, int, float, bool, type(None)})  # immutable: a copy may share them


class ReadOnlyObject(DrawbError, TypeError):
    """A change to an object the simulated cluster stores: they are shared by every reader."""

    hint = ("copy it first (drawb.cluster.sim.tree.copy_tree(obj), or copy.deepcopy) and change the copy; "
            "store a changed object by applying it")


def _about(container: Any) -> str:
    """The stored object ``container`` is (kind and name), or a short description of a part of one."""
    if isinstance(container, dict):
        meta = container.get("metadata")
        if isinstance(meta, dict) and "kind" in container and meta.get("name"):
            namespace = f"{meta['namespace']}/" if meta.get("namespace") else ""
            return f"{container['kind']} '{namespace}{meta['name']}'"
        keys = ", ".join(repr(k) for k in list(container)[:4])
        return f"a map inside a stored object (keys {keys}{', ...' if len(container) > 4 else ''})"
    return f"a list of {len(container)} item(s) inside a stored object"


def _refusing(method: str):
    def refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        what = f"{method}({', '.join(repr(a) for a in args[:1])}{', ...' if len(args) > 1 else ''})"
        raise ReadOnlyObject(f"{what} on {_about(self)}: it is read-only (the simulated cluster's stored "
                             "objects are shared by every reader and never changed in place)")

    refuse.__name__ = method
    return refuse


_DICT_CHANGES = ("__setitem__", "__delitem__", "__ior__", "update", "pop", "popitem", "setdefault", "clear")
_LIST_CHANGES = ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "extend", "insert", "pop",
                 "remove", "clear", "sort", "reverse")


class StoredDict(dict):
    """A read-only dict of a stored object (made by ``freeze``: its values are frozen too)."""

    __slots__ = ()  # its changing methods refuse (below); pickled by ``_reduced_dict``

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo: dict) -> dict:
        return copy_tree(self)


class StoredList(list):
    """A read-only list of a stored object (made by ``freeze``: its items are frozen too)."""

    __slots__ = ()  # its changing methods refuse (below)

    def __copy__(self) -> list:
        return list(self)

    def __deepcopy__(self, memo: dict) -> list:
        return copy_tree(self)


_REFUSALS = {cls: {name: _refusing(name) for name in names}
             for cls, names in ((StoredDict, _DICT_CHANGES), (StoredList, _LIST_CHANGES))}
for _cls, _methods in _REFUSALS.items():
    for _name, _refuse in _methods.items():
        setattr(_cls, _name, _refuse)

_set = dict.__setitem__
_FROZEN = frozenset({StoredDict, StoredList, *_SHARED})


def freeze(value):
    """``value`` (decoded JSON: dicts, lists, scalars) as a read-only tree; frozen parts are kept as they are."""
    kind = type(value)
    if kind is dict:
        frozen = StoredDict(value)  # copied in C, then its containers replaced while it is still being made
        for k, v in value.items():
            if type(v) not in _FROZEN:
                _set(frozen, k, freeze(v))
        return frozen
    if kind is list:
        return StoredList([v if type(v) in _FROZEN else freeze(v) for v in value])
    if kind in _FROZEN:
        return value
    raise TypeError(f"only decoded JSON can be stored, not {kind.__name__}")


def copy_tree(value):
    """A plain, changeable deep copy of a (stored) object, about 4x faster than ``copy.deepcopy``;
    anything but dicts, lists and scalars is copied by ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict or kind is StoredDict:
        return {k: v if type(v) in _SHARED else copy_tree(v) for k, v in value.items()}
    if kind is list or kind is StoredList:
        return [v if type(v) in _SHARED else copy_tree(v) for v in value]
    if kind in _SHARED:
        return value
    return copy.deepcopy(value)


def _reduced_dict(stored: StoredDict) -> tuple:
    """How pickle writes a StoredDict: the class, called with no argument, then its items, as it writes a dict
    (registered with ``copyreg``: faster than the default for a dict subclass, which looks up several
    attributes per container)."""
    return StoredDict, (), None, None, _iter(_items(stored))


def _reduced_list(stored: StoredList) -> tuple:
    """How pickle writes a StoredList: the class, called with no argument, then its items."""
    return StoredList, (), None, _iter(stored)


_iter, _items = iter, dict.items
copyreg.pickle(StoredDict, _reduced_dict)
copyreg.pickle(StoredList, _reduced_list)

# Unpickling a kept cluster: pickle fills each container it rebuilds through ``__setitem__`` (dicts) or
# ``extend``/``append`` (lists), which refuse. While a cluster is read (``opened_for_loading`` until
# ``closed_after_loading``) those are the builtins' C methods, so a stored container is rebuilt at the speed
# of a plain one: no Python call per container or item, the class applied once per container. (Meanwhile a
# change elsewhere in the process to a stored object is not refused: a read takes well under a second.)
# __delitem__ shares __setitem__'s C slot: set alone, the slot would look the method up per item.
_LOADING = {StoredDict: ("__setitem__", "__delitem__"), StoredList: ("__setitem__", "__delitem__", "extend", "append")}
_loads = 0  # clusters being read now
_loads_lock = threading.Lock()


def opened_for_loading() -> None:
    """A cluster's read begins: the stored classes take items as ``dict`` and ``list`` do until it ends."""
    global _loads
    with _loads_lock:
        _loads += 1
        if _loads == 1:
            for cls, base in ((StoredDict, dict), (StoredList, list)):
                for name in _LOADING[cls]:
                    setattr(cls, name, getattr(base, name))


def closed_after_loading() -> None:
    """A cluster's read ended: once no other is under way, the stored classes refuse changes again."""
    global _loads
    with _loads_lock:
        _loads = max(_loads - 1, 0)
        if _loads == 0:
            for cls, methods in _REFUSALS.items():
                for name, refuse in methods.items():
                    setattr(cls, name, refuse)


@contextmanager
def loading_kept() -> Iterator[None]:
    """Around unpickling a cluster: the reads it opened are closed when it ends, also after an error."""
    before = _loads
    try:
        yield
    finally:
        while _loads > before:
            closed_after_loading()


# YAML writes them as the maps and lists they are (its dumpers know exact dicts and lists only).
for _dumper in {yaml.SafeDumper, yaml.Dumper, getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                getattr(yaml, "CDumper", yaml.Dumper)}:
    _dumper.add_representer(StoredDict, yaml.representer.SafeRepresenter.represent_dict)
    _dumper.add_representer(StoredList, yaml.representer.SafeRepresenter.represent_list)
