"""Data derived from a cluster's objects, remembered under one rule for the whole package.

A cluster's objects are replaced whole, never changed in place (an informer's store and the simulated
store hold them so), so what is derived from one object (a slice's fields, a selector's verdict on a
device, the devices a claim holds) stays true while that object lives. A ``Table`` remembers such
data by the identity of the objects it derives from, under one rule:

- an entry holds its objects alongside the value, so no id is reused while the entry lives, and an
  entry found is always the one made for these very objects;
- an entry may carry a stamp: the parts of its objects it was read through that a caller may still
  change in place (the simulated store's objects raise on any change, but an object a caller built or
  copied is plain: tests replace a claim's ``status`` or a device's ``attributes`` on it): one part, or a tuple of them, compared with ``==`` (Python compares a
  tuple's items by identity first, so the same parts cost no more than an identity check, and parts
  replaced by equal ones derive the same value); a lookup whose stamp differs finds nothing (``stamp``
  stays None where nothing is changed in place);
- a table holds at most ``limit`` entries: the entry that would pass the limit empties the table
  first (no order of use is kept, so finding an entry costs one dictionary lookup);
- ``clear()`` empties every table at once.

Pure functions of hashable values (strings, numbers, tuples of them) use ``functools.lru_cache``
instead: nothing is held there but the values themselves.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

V = TypeVar("V")

_tables: list[Table] = []


class Table(Generic[V]):
    """Values derived from objects, keyed by the objects' identity and an optional hashable ``part``
    (what else the value depends on: a flag, an expression)."""

    __slots__ = ("name", "limit", "_entries")

    def __init__(self, name: str, limit: int) -> None:
        self.name, self.limit = name, limit
        self._entries: dict[Hashable, tuple[object, object, V]] = {}
        _tables.append(self)

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, obj: object, part: Hashable = None, stamp: object = None) -> V | None:
        """What was remembered for ``obj`` (and ``part``) with this ``stamp``, or None."""
        entry = self._entries.get(id(obj) if part is None else (id(obj), part))
        if entry is None:
            return None
        return entry[2] if entry[1] is stamp or entry[1] == stamp else None

    def put(self, obj: object, value: V, part: Hashable = None, stamp: object = None) -> V:
        """Remember ``value`` for ``obj`` (and ``part``) with this ``stamp``; returns it."""
        key = id(obj) if part is None else (id(obj), part)
        if len(self._entries) >= self.limit and key not in self._entries:
            self._entries.clear()
        self._entries[key] = (obj, stamp, value)
        return value

    # get_all and put_all repeat get's and put's few lines rather than share a helper: a lookup is on the
    # allocator's per-device path, where one more call measured about 20 ms more on a repeated why at 10,000 nodes.
    def get_all(self, objs: Sequence[object], part: Hashable = None, stamp: object = None) -> V | None:
        """What was remembered for these objects in this order (and ``part``) with this ``stamp``, or None."""
        entry = self._entries.get((part, *map(id, objs)))
        if entry is None:
            return None
        return entry[2] if entry[1] is stamp or entry[1] == stamp else None

    def put_all(self, objs: Sequence[object], value: V, part: Hashable = None, stamp: object = None) -> V:
        """Remember ``value`` for these objects in this order (and ``part``) with this ``stamp``; returns it."""
        key = (part, *map(id, objs))
        if len(self._entries) >= self.limit and key not in self._entries:
            self._entries.clear()
        self._entries[key] = (tuple(objs), stamp, value)
        return value

    def clear(self) -> None:
        """Forget every entry of this table."""
        self._entries.clear()


def clear() -> None:
    """Forget every entry of every table."""
    for table in _tables:
        table.clear()
