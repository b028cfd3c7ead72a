"""The simulated API server drops the fields of the gates each release's API server reads when it drops
fields from new objects (``dropDisabledFields`` of the DeviceClass, ResourceSlice and claim-template
strategies, and ``pkg/api/resourceclaimspec`` from 1.35 on), read from the release's Go source."""

from __future__ import annotations

import re
from pathlib import Path

from drawb import versions
from tests.unit.versions.go_feature_gates import release

__all__ = ["release"]  # the fixture, one per known minor

SIM_GATES = Path(__file__).parents[3] / "drawb/cluster/sim/gates.py"
_FUNC = re.compile(r"^func (\w+)\(.*?^}", re.MULTILINE | re.DOTALL)
_STRATEGIES = ("deviceclass", "resourceslice", "resourceclaimtemplate")


def _functions(path: Path) -> dict[str, str]:
    return {m.group(1): m.group(0) for m in _FUNC.finditer(path.read_text())} if path.is_file() else {}


def gates_read_when_dropping(source: Path, strategy: str) -> set[str]:
    """Every gate the strategy's dropDisabledFields reads, following its calls (into resourceclaimspec too)."""
    files = {"": _functions(source / f"pkg/registry/resource/{strategy}/strategy.go"),
             "resourceclaimspec.": _functions(source / "pkg/api/resourceclaimspec/util.go")}
    gates, seen, todo = set(), set(), [("", "dropDisabledFields")]
    while todo:
        where, name = todo.pop()
        if (where, name) in seen or name not in files[where]:
            continue
        seen.add((where, name))
        body = files[where][name]
        gates.update(re.findall(r"features\.(\w+)", body))
        todo += [(where, called) for called in re.findall(r"(?<![.\w])(\w+)\(", body)]
        todo += [("resourceclaimspec.", called) for called in re.findall(r"resourceclaimspec\.(\w+)\(", body)]
        if where == "resourceclaimspec.":
            todo += [(where, called) for called in re.findall(r"(?<![.\w])(\w+)\(", body)]
    return gates


def gates_the_simulation_drops() -> set[str]:
    return {g for call in re.findall(r"_off\(([^)]*)\)", SIM_GATES.read_text()) for g in re.findall(r'"(\w+)"', call)}


def test_every_gate_the_release_drops_fields_for_is_one_the_simulation_drops_fields_for(release):
    rules, source = release
    theirs = set().union(*(gates_read_when_dropping(source, s) for s in _STRATEGIES))
    assert theirs and theirs <= gates_the_simulation_drops(), theirs - gates_the_simulation_drops()
    assert theirs <= set(rules.gates)


def test_requests_tolerations_are_dropped_exactly_where_the_release_drops_them(release):
    rules, source = release
    claims = gates_read_when_dropping(source, "resourceclaimtemplate")
    assert ("DRADeviceTaints" in claims) is rules.has("api.tolerations_gated")
