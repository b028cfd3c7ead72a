"""Which device attributes a checked selector reads, found in its tree: ``device.attributes["dom"].key``,
``device.attributes["dom"]["key"]``, and the presence tests that guard such a read (``has(...)``,
``"key" in device.attributes["dom"]``, ``.?key``), which make a missing attribute no runtime error."""

from __future__ import annotations

from dataclasses import dataclass

from drawb.cel.ast import Node

DEVICE_MAPS = ("device.attributes", "device.capacity")


def domain_ref(node: Node) -> tuple[str, str] | None:
    """`device.attributes["dom"]` / `device.capacity.dom` -> ("attributes"|"capacity", dom)."""
    if node.kind == "call" and node.name == "_[_]" and len(node.args) == 2:
        base, key = node.args
        if base.kind == "ident" and (base.ref_name or base.name) in DEVICE_MAPS and key.kind == "const":
            if isinstance(key.value, str):
                return (base.ref_name or base.name)[len("device.") :], key.value
    if node.kind == "select" and not node.test_only:
        base = node.target
        if base.kind == "ident" and (base.ref_name or base.name) in DEVICE_MAPS:
            return (base.ref_name or base.name)[len("device.") :], node.name
    return None


def attribute_read(node: Node) -> tuple[str, str] | None:
    """``device.attributes["dom"].key`` / ``device.attributes["dom"]["key"]`` -> ("dom", "key")."""
    if node.kind == "select" and not node.test_only:
        ref = domain_ref(node.target)
        if ref is not None and ref[0] == "attributes":
            return ref[1], node.name
    if node.kind == "call" and node.name == "_[_]" and len(node.args) == 2 and node.target is None:
        ref = domain_ref(node.args[0])
        key = node.args[1]
        if ref is not None and ref[0] == "attributes" and key.kind == "const" and type(key.value) is str:
            return ref[1], key.value
    return None


def _presence_test(node: Node) -> tuple[str, str] | None:
    """``has(device.attributes["dom"].key)``, ``"key" in device.attributes["dom"]``, ``...["dom"].?key`` ->
    ("dom", "key")."""
    if node.kind == "select" and node.test_only:
        ref = domain_ref(node.target)
        return (ref[1], node.name) if ref is not None and ref[0] == "attributes" else None
    if node.kind == "call" and len(node.args) == 2 and node.name in ("@in", "_?._", "_[?_]"):
        key, container = (node.args if node.name == "@in" else node.args[::-1])
        ref = domain_ref(container)
        if ref is not None and ref[0] == "attributes" and key.kind == "const" and isinstance(key.value, str):
            return ref[1], key.value
    return None


@dataclass(frozen=True)
class AttributeRead:
    """One attribute a selector reads: ``domain/name``, and whether the selector tests for it somewhere (then
    a device without it is no runtime error)."""

    domain: str
    name: str
    guarded: bool

    @property
    def qualified(self) -> str:
        """``gpu.nvidia.com/index``."""
        return f"{self.domain}/{self.name}"


def attribute_reads(root: Node) -> list[AttributeRead]:
    """Every attribute the tree under ``root`` reads or tests for, in order of first mention."""
    reads: dict[tuple[str, str], bool] = {}
    tested: set[tuple[str, str]] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        found = attribute_read(node)
        if found is not None:
            reads.setdefault(found, True)
        test = _presence_test(node)
        if test is not None:
            tested.add(test)
            reads.setdefault(test, True)
        stack.extend(reversed(node.children()))
    return [AttributeRead(domain, name, (domain, name) in tested) for domain, name in reads]
