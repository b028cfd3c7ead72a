"""DESIGN.md's layering, read from the source: every import of every module of drawb, module level, inside
functions and under ``if TYPE_CHECKING:``, absolute and relative, points down the floors, and no two
modules import each other, directly or round a loop.

A floor may import its own floor and the floors below it. The order is DESIGN.md section 2's; rooms it
does not name are placed where their imports say they stand (see FLOORS).
"""

from __future__ import annotations

import ast
from pathlib import Path

import drawb

# Top floor first. A module stands on the floor of the longest name here that it is, or is inside;
# ``drawb`` alone is the package's own module (``%load_ext drawb``), not all of drawb.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # drawb.testing (the local control plane, the fake driver and the allocation checks the tests use)
    # drives drawb from outside as a front end does; nothing in drawb imports it.
    ("front ends", ("drawb", "drawb.notebook", "drawb.cli", "drawb.testing")),
    ("commands", ("drawb.commands",)),
    # drawb.build is the claim builder's model: it predicts with the scheduler's view, and only the
    # notebook's claim builder uses it.
    ("workflows", ("drawb.check", "drawb.doctor", "drawb.migrate", "drawb.convert", "drawb.snapshot", "drawb.map",
                   "drawb.build", "drawb.upgrade")),
    ("the scheduler's view", ("drawb.plan", "drawb.explain")),
    ("session", ("drawb.session",)),
    ("cluster access", ("drawb.cluster",)),
    # drawb.access is the RBAC manifest (the REST layer reads a 403 against it: drawb.cluster.refusal) and the
    # reading of any role's rules.
    ("the RBAC manifest", ("drawb.access",)),
    ("pure core", ("drawb.alloc", "drawb.render", "drawb.apirules", "drawb.inventory", "drawb.cel", "drawb.gpu", "drawb.api")),
    # drawb.redact (credentials out of every message: DrawbError uses it), drawb.release (drawb's own
    # version), drawb.collector (pausing the garbage collector), drawb.atomicfile (writing a file whole) and
    # drawb.memo (data derived from objects, remembered under one rule) import nothing of drawb.
    ("ground", ("drawb.versions", "drawb.errors", "drawb.redact", "drawb.release", "drawb.collector",
                "drawb.atomicfile", "drawb.memo")),
)

# Libraries only some rooms may import: the notebook's widgets, and the official Kubernetes client
# (one REST layer: drawb.cluster.kube).
ONLY_IN = {
    "IPython": ("drawb.notebook",),
    "ipywidgets": ("drawb.notebook",),
    "traitlets": ("drawb.notebook",),
    "anywidget": ("drawb.notebook",),
    "itables": ("drawb.notebook",),
    "kubernetes": ("drawb.cluster.kube", "drawb.testing"),
}

ROOT = Path(drawb.__file__).parent


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package at ``root`` by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, imported name) of every import in the module: of the package's modules the one imported
    (``from a import b`` is ``a.b`` when that is a module, else ``a``), of others the top-level name."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found += [(node.lineno, f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source)
                      for alias in node.names]
    top = name.partition(".")[0]
    return [(line, _module(target, known) if target.partition(".")[0] == top else target.partition(".")[0])
            for line, target in found]


def _module(target: str, known: dict[str, Path]) -> str:
    while target not in known and "." in target:
        target = target.rpartition(".")[0]
    return target


def floor(name: str) -> int | None:
    """The index in FLOORS (0 = top) of the floor ``name`` stands on, or None when no floor names it."""
    best = None
    for index, (_, rooms) in enumerate(FLOORS):
        for room in rooms:
            if (name == room or (room != "drawb" and name.startswith(room + "."))) and (
                    best is None or len(room) > len(best[1])):
                best = (index, room)
    return None if best is None else best[0]


def upward_imports(known: dict[str, Path]) -> list[str]:
    """Each import from a floor to a higher one, and each library imported outside the rooms ONLY_IN allows."""
    found = []
    for name, path in known.items():
        for line, target in imports(name, path, known):
            where = f"{path.relative_to(ROOT.parent)}:{line}"
            if target in known and target != name and floor(target) < floor(name):
                found.append(f"{where}: {name} ({FLOORS[floor(name)][0]}) imports {target} "
                             f"({FLOORS[floor(target)][0]}, a higher floor)")
            allowed = ONLY_IN.get(target)
            if allowed and not any(name == room or name.startswith(room + ".") for room in allowed):
                found.append(f"{where}: {name} imports {target}, which only {', '.join(allowed)} may")
    return found


def cycles(known: dict[str, Path]) -> list[list[str]]:
    """The groups of modules that import each other, directly or round a loop (Tarjan's strongly
    connected components of more than one module)."""
    edges = {name: sorted({t for _, t in imports(name, path, known) if t in known and t != name})
             for name, path in known.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for target in edges[name]:
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == name:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for name in edges:
        if name not in index:
            visit(name)
    return groups


def test_every_module_stands_on_a_floor():
    assert [name for name in modules() if floor(name) is None] == [], "add each to FLOORS where it belongs"


def test_imports_point_down_the_floors():
    found = upward_imports(modules())
    assert not found, "move the code to the floor it belongs to (DESIGN.md section 2):\n" + "\n".join(found)


def test_no_two_modules_import_each_other():
    found = cycles(modules())
    assert not found, "modules that import each other:\n" + "\n".join(" <-> ".join(group) for group in found)


def test_the_reader_sees_every_form_of_import(tmp_path):
    package = tmp_path / "drawb"
    (package / "cluster").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "errors.py").write_text("def hint():\n    from .cluster import kube\n")
    (package / "cluster" / "__init__.py").write_text("")
    (package / "cluster" / "kube.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..commands import read\n"
        "from . import other\nimport kubernetes.client\n")
    (package / "cluster" / "other.py").write_text("from drawb.cluster.kube import thing\n")
    (package / "commands").mkdir()
    (package / "commands" / "read.py").write_text("")
    known = modules(package)
    assert imports("drawb.errors", package / "errors.py", known) == [(2, "drawb.cluster.kube")]
    assert sorted(imports("drawb.cluster.kube", package / "cluster" / "kube.py", known)) == [
        (1, "typing"), (3, "drawb.commands.read"), (4, "drawb.cluster.other"), (5, "kubernetes")]
    assert cycles(known) == [["drawb.cluster.kube", "drawb.cluster.other"]]
