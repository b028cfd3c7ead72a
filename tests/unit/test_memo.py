"""drawb.memo's one rule: entries keyed by the identity of the objects they derive from, holding them;
at most ``limit`` entries, the one that would pass it empties the table; ``clear()`` empties every table."""

from __future__ import annotations

import gc

from drawb import memo
from drawb.memo import Table


def test_an_entry_is_found_for_the_same_object_only_and_per_part():
    table: Table[str] = Table("test", 10)
    one, equal = {"a": 1}, {"a": 1}
    table.put(one, "first")
    table.put(one, "true", part=True)
    assert table.get(one) == "first" and table.get(one, True) == "true"
    assert table.get(equal) is None and table.get(one, False) is None


def test_an_entry_holds_its_objects_so_their_ids_are_never_reused():
    table: Table[str] = Table("test", 10)
    table.put({"made": "here"}, "value")
    gc.collect()
    assert [obj for obj, _, _ in table._entries.values()] == [{"made": "here"}]


def test_a_list_of_objects_is_found_in_the_same_order_only():
    table: Table[str] = Table("test", 10)
    a, b = {}, {}
    table.put_all([a, b], "ab", part=1)
    assert table.get_all([a, b], 1) == "ab"
    assert table.get_all([b, a], 1) is None and table.get_all([a], 1) is None and table.get_all([a, b]) is None


def test_the_entry_that_would_pass_the_limit_empties_the_table_first():
    table: Table[int] = Table("test", 3)
    objects = [{} for _ in range(4)]
    for n, obj in enumerate(objects[:3]):
        table.put(obj, n)
    table.put(objects[0], 10)  # replacing an entry makes no room
    assert len(table) == 3 and table.get(objects[0]) == 10
    table.put(objects[3], 3)
    assert len(table) == 1 and table.get(objects[3]) == 3 and table.get(objects[1]) is None


def test_an_entry_is_found_with_the_same_or_equal_stamp_only():
    table: Table[str] = Table("test", 10)
    claim, allocation = {}, {"devices": {"results": [1]}}
    table.put(claim, "read", stamp=allocation)
    assert table.get(claim, stamp=allocation) == "read" and table.get(claim, stamp={"devices": {"results": [1]}}) == "read"
    assert table.get(claim, stamp={"devices": {"results": [2]}}) is None and table.get(claim) is None
    spec, devices = {}, [{"name": "gpu-0"}]
    table.put_all([claim], "parts", stamp=(spec, devices))
    assert table.get_all([claim], stamp=(spec, devices)) == "parts"
    assert table.get_all([claim], stamp=(spec, [{"name": "gpu-9"}])) is None
    assert table.get_all([claim], stamp=(spec,)) is None


def test_clear_empties_every_table():
    first: Table[int] = Table("first", 5)
    second: Table[int] = Table("second", 5)
    obj = {}
    first.put(obj, 1)
    second.put_all([obj], 2)
    memo.clear()
    assert len(first) == len(second) == 0
