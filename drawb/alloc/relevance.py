"""Which device attributes can change an allocation: the ones the claims' and classes' CEL selectors
read and the constraints name.

Nodes whose devices differ only in attributes nobody reads (a GPU's ``uuid``, its PCI bus id) get
the same allocation up to names, so ``drawb.alloc.view`` groups them and one allocation serves all.
The walk is conservative: a selector that reads an attribute map as a whole (iterating it, ``size``, a computed
key) makes every attribute of that domain relevant, and one that reads ``device.attributes``
itself, or cannot be compiled, makes every attribute relevant (``None``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from drawb.cel.ast import Node

ALL = None  # every attribute is relevant
_ATTRIBUTES = "device.attributes"


def _name(node: Node) -> str:
    return node.ref_name or node.name


def _domain(node: Node) -> str | None:
    """``device.attributes["dom"]`` or ``device.attributes.dom``: the domain, else None."""
    if node.kind == "call" and node.name in ("_[_]", "_[?_]", "_?._") and len(node.args) == 2:
        base, key = node.args
        if base.kind == "ident" and _name(base) == _ATTRIBUTES and key.kind == "const" and isinstance(key.value, str):
            return key.value
    if node.kind == "select" and not node.test_only and node.target is not None:
        if node.target.kind == "ident" and _name(node.target) == _ATTRIBUTES:
            return node.name
    if node.kind == "ident" and _name(node).startswith(_ATTRIBUTES + "."):
        return _name(node)[len(_ATTRIBUTES) + 1:]
    return None


def attributes_read(root: Node) -> set[str] | None:
    """Qualified attribute names (``domain/name``, or ``domain/*`` for a whole domain) the expression
    can read; None when it reads ``device.attributes`` as a whole."""
    out: set[str] = set()

    def walk(e: Node) -> bool:
        if e.kind == "select" and e.target is not None:
            domain = _domain(e.target)
            if domain is not None:
                out.add(f"{domain}/{e.name}")
                return True
        if e.kind == "call" and e.name in ("_[_]", "_[?_]", "_?._") and len(e.args) == 2:
            domain = _domain(e.args[0])
            key = e.args[1]
            if domain is not None and key.kind == "const" and isinstance(key.value, str):
                out.add(f"{domain}/{key.value}")
                return True
        if e.kind == "call" and e.name == "@in" and len(e.args) == 2 and e.args[0].kind == "const":
            domain = _domain(e.args[1])
            if domain is not None and isinstance(e.args[0].value, str):
                out.add(f"{domain}/{e.args[0].value}")
                return True
        domain = _domain(e)
        if domain is not None:  # the domain's map as a value
            out.add(f"{domain}/*")
            return True
        if e.kind == "ident" and _name(e) in (_ATTRIBUTES, "device"):
            return False
        return all(walk(c) for c in e.children())

    return out if walk(root) else ALL


def _expressions(claims: Iterable[Mapping[str, Any]], classes: Mapping[str, Mapping[str, Any]]) -> tuple[list[str], set[str]]:
    """The CEL expressions (classes' and requests') and the constraint attributes of ``claims``."""
    expressions: list[str] = []
    constrained: set[str] = set()
    for claim in claims:
        devices = (claim.get("spec") or {}).get("devices") or {}
        for request in devices.get("requests") or []:
            for part in [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]:
                device_class = classes.get(part.get("deviceClassName") or "") or {}
                for selector in [*((device_class.get("spec") or {}).get("selectors") or []), *(part.get("selectors") or [])]:
                    expressions.append(((selector or {}).get("cel") or {}).get("expression") or "")
        for constraint in devices.get("constraints") or []:
            for key in ("matchAttribute", "distinctAttribute"):
                if constraint.get(key):
                    constrained.add(constraint[key])
    return expressions, constrained


def relevant_attributes(claims: Iterable[Mapping[str, Any]], classes: Mapping[str, Mapping[str, Any]],
                        kubernetes_version: str, feature_gates: Mapping[str, bool] | None) -> frozenset[str] | None:
    """Attributes an allocation of ``claims`` can depend on (see the module); None: all of them."""
    from drawb.cel import CELCompileError, compile_selector
    from drawb.cel.env import CEL_GATES

    cel_gates = {k: v for k, v in (feature_gates or {}).items() if k in CEL_GATES}
    expressions, out = _expressions(claims, classes)
    for expression in expressions:
        try:
            selector = compile_selector(expression, kubernetes_version=kubernetes_version, stored=True,
                                        feature_gates=cel_gates)
        except (CELCompileError, TypeError, ValueError):
            return ALL
        read = attributes_read(selector.ast.root)
        if read is None:
            return ALL
        out |= read
    return frozenset(out)


def keeps(relevant: frozenset[str] | None, driver: str, key: str) -> bool:
    """Whether attribute ``key`` of a device of ``driver`` is relevant (bare names are the driver's)."""
    if relevant is None:
        return True
    qualified = key if "/" in key else f"{driver}/{key}"
    return qualified in relevant or qualified.split("/", 1)[0] + "/*" in relevant
