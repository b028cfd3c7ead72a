"""Keep ruamel's comments where a reader expects them when keys are removed or appended.

ruamel attaches the comment lines that follow a value to that value's key (or, at the end of a
subtree, to its last key), so deleting a key would delete the comment lines below it, and
appending a key would slip the new lines above them. These helpers move those lines instead.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.tokens import CommentToken

Holder = tuple[dict, Any, int]  # (ca.items, key or index, slot of the token after the value)


def _after_first_line(token: CommentToken | None) -> str:
    if token is None or "\n" not in token.value:
        return ""
    return token.value[token.value.index("\n") + 1:]


def _is_block(node: Any) -> bool:
    return isinstance(node, (CommentedMap, CommentedSeq)) and len(node) > 0 and not node.fa.flow_style()


def _deepest_last(node: CommentedMap | CommentedSeq) -> Holder | None:
    """Where ruamel keeps the comment lines that follow ``node``'s subtree (None for an empty node)."""
    if not len(node):
        return None
    if isinstance(node, CommentedMap):
        key, slot = list(node)[-1], 2
    else:
        key, slot = len(node) - 1, 0
    value = node[key]
    if _is_block(value):
        return _deepest_last(value)
    return node.ca.items, key, slot


def _get(holder: Holder) -> CommentToken | None:
    items, key, slot = holder
    entry = items.get(key)
    return entry[slot] if entry and len(entry) > slot else None


def _set(holder: Holder, token: CommentToken | None) -> None:
    items, key, slot = holder
    entry = items.setdefault(key, [None, None, None, None])
    entry[slot] = token


def _new_token(value: str) -> CommentToken:
    return CommentToken(value, CommentMark(0), None)


def _own_token(node: CommentedMap | CommentedSeq) -> CommentToken | None:
    comment = node.ca.comment
    return comment[0] if comment else None


def take_tail(node: CommentedMap | CommentedSeq) -> str:
    """Detach and return the comment lines that follow ``node``'s subtree (its end-of-line comment stays)."""
    holder = _deepest_last(node)
    token = _get(holder) if holder else _own_token(node)
    tail = _after_first_line(token)
    if tail:
        token.value = token.value[: token.value.index("\n") + 1]
        if token.value == "\n" and holder:
            _set(holder, None)
    return tail


def put_tail(node: CommentedMap | CommentedSeq, text: str) -> None:
    """Attach comment lines ``text`` after ``node``'s subtree."""
    if not text:
        return
    holder = _deepest_last(node)
    token = _get(holder) if holder else _own_token(node)
    if token is not None:
        token.value = (token.value if token.value.endswith("\n") else token.value + "\n") + text
    elif holder:
        _set(holder, _new_token("\n" + text))
    else:
        node.ca.comment = [_new_token("\n" + text), None]


def remove_key(mapping: CommentedMap, key: str) -> None:
    """Delete ``key`` (a scalar, or an emptied collection) and keep the comment lines that followed it."""
    value = mapping[key]
    if isinstance(value, (CommentedMap, CommentedSeq)) and len(value):
        orphan = take_tail(value)
    elif isinstance(value, (CommentedMap, CommentedSeq)):
        orphan = _after_first_line(_own_token(value))
    else:
        entry = mapping.ca.items.get(key)
        orphan = _after_first_line(entry[2] if entry and len(entry) > 2 else None)
    keys = list(mapping)
    index = keys.index(key)
    del mapping[key]
    mapping.ca.items.pop(key, None)
    if not orphan:
        return
    if index == 0:
        put_tail_before_first(mapping, orphan)
        return
    previous = mapping[keys[index - 1]]
    if _is_block(previous):
        put_tail(previous, orphan)
    else:
        holder = (mapping.ca.items, keys[index - 1], 2)
        token = _get(holder)
        if token is not None:
            token.value += orphan
        else:
            _set(holder, _new_token("\n" + orphan))


def put_tail_before_first(mapping: CommentedMap, text: str) -> None:
    """Attach comment lines ``text`` to the line that opens ``mapping`` (they print above its first key)."""
    token = _own_token(mapping)
    if token is not None:
        token.value = (token.value if token.value.endswith("\n") else token.value + "\n") + text
    else:
        mapping.ca.comment = [_new_token("\n" + text), None]


def append_key(mapping: CommentedMap, key: str, value: Any) -> None:
    """Add ``key: value`` at the end of ``mapping``, below the lines that ended it (comments stay last)."""
    tail = take_tail(mapping)
    mapping[key] = value
    put_tail(mapping, tail)


def extend_list(seq: CommentedSeq, items: list) -> None:
    """Append ``items`` to ``seq``, the comment lines that ended it staying last."""
    tail = take_tail(seq)
    seq.extend(items)
    put_tail(seq, tail)
