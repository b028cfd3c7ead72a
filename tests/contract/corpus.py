"""The shared manifest corpus (tests/data/corpus), run through any Cluster, and the rule comparing two runs.

Each corpus file is one ``apply`` call (one or more documents) with a header saying why it is there
and what the API server does with it::

    # firstAvailable: dropped while DRAPrioritizedList is off, leaving a request with neither
    # expect: accept
    # expect (DRAPrioritizedList off): reject

An ``expect`` line with conditions (a gate ``on`` or ``off``, or a behaviour of
``drawb.versions.facts.BEHAVIOURS`` the minor has) gives the answer where all of them hold; of those that
hold, the one with the most conditions wins (the first of equals), so the answer follows the version and
the gates of the cluster, whichever they are.

Comparison rule (``differences``): an object counts as stored identically when, after leaving out
what only the server sets for itself (``metadata.uid``, ``resourceVersion``, ``creationTimestamp``,
``generation``, ``managedFields`` and ``status``), every field either backend stored has the same
value in the other, except fields the real server added that neither the manifest nor the simulated
cluster has: those are the server's defaulting (a pod's ``dnsPolicy``, a Service's ``clusterIP``),
which the simulated cluster does not model, and are ignored. So a field the real server drops must be
dropped by the simulated cluster too, a field it keeps must be kept, and a default the simulated
cluster fills in must be the one the real server fills in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from drawb import versions
from drawb.cluster.protocol import ClusterError

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
NAMESPACES = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "corpus"}},
    {"apiVersion": "v1", "kind": "Namespace",
     "metadata": {"name": "corpus-admin", "labels": {"resource.kubernetes.io/admin-access": "true"}}},
]
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")


@dataclass
class Case:
    """One corpus file."""

    name: str
    documents: list[dict]
    why: str
    expect: list[tuple[tuple[str, ...], str]]  # the expect lines in file order: (conditions, accept | reject)

    def expected(self, rules: versions.Rules, gates: Mapping[str, bool]) -> str:
        """``accept`` or ``reject`` in the minor of ``rules`` with the DRA ``gates`` (a gate left out has its
        default there)."""
        values = {**rules.defaults(), **gates}

        def holds(condition: str) -> bool:
            gate, _, state = condition.partition(" ")
            return values.get(gate, False) == (state == "on") if state else rules.has(condition)

        holding = [(conditions, v) for conditions, v in self.expect if all(holds(c) for c in conditions)]
        if not holding:
            raise ValueError(f"{self.name}: no '# expect:' line holds in Kubernetes {rules.minor}")
        return max(holding, key=lambda line: len(line[0]))[1]


@dataclass
class Outcome:
    """What a cluster did with one case: accepted (and stored what) or rejected (and said what)."""

    accepted: bool
    stored: list[dict] = field(default_factory=list)
    error: str = ""
    status: int | None = None

    @property
    def verdict(self) -> str:
        """``accept`` or ``reject``."""
        return "accept" if self.accepted else "reject"


def load_corpus() -> list[Case]:
    """Every corpus file, in name order."""
    cases = []
    for path in sorted(CORPUS.glob("*.yaml")):
        text = path.read_text()
        header = re.findall(r"^# expect(?: \(([\w., ]+)\))?: (accept|reject)$", text, re.MULTILINE)
        expect = [(tuple(c.strip() for c in conditions.split(",") if c.strip()), value) for conditions, value in header]
        why = text.splitlines()[0].removeprefix("# ")
        cases.append(Case(path.stem, [d for d in yaml.safe_load_all(text) if d], why, expect))
    return cases


def run_case(cluster, case: Case) -> Outcome:
    """Apply the case's documents as one call; the objects as stored, or the refusal."""
    import copy

    try:
        stored = cluster.apply(copy.deepcopy(case.documents))
    except ClusterError as exc:
        return Outcome(False, error=str(exc), status=exc.status)
    return Outcome(True, stored=[copy.deepcopy(o) for o in stored])


def comparable(obj: dict) -> dict:
    """``obj`` without what only the server sets for itself (see the module's comparison rule)."""
    out = {k: v for k, v in obj.items() if k != "status"}
    out["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in SERVER_METADATA}
    return out


def differences(real: object, sim: object, sent: object, path: str = "") -> list[str]:
    """Where the simulated cluster's object differs from the real one's, under the comparison rule."""
    if isinstance(real, dict) and isinstance(sim, dict):
        sent = sent if isinstance(sent, dict) else {}
        found = []
        for key in sorted(set(real) | set(sim)):
            where = f"{path}.{key}" if path else key
            if key not in sim:
                if key in sent:
                    found.append(f"{where}: the real server kept {real[key]!r}, the simulated cluster dropped it")
                continue  # server defaulting the simulated cluster does not model
            if key not in real:
                found.append(f"{where}: the simulated cluster has {sim[key]!r}, the real server does not")
                continue
            found += differences(real[key], sim[key], sent.get(key), where)
        return found
    if isinstance(real, list) and isinstance(sim, list) and len(real) == len(sim):
        sent = sent if isinstance(sent, list) and len(sent) == len(real) else [None] * len(real)
        return [d for i, (r, s, t) in enumerate(zip(real, sim, sent)) for d in differences(r, s, t, f"{path}[{i}]")]
    if real != sim:
        return [f"{path}: real {real!r}, simulated {sim!r}"]
    return []


def outcome_differences(case: Case, real: Outcome, sim: Outcome) -> list[str]:
    """Every way the two runs of ``case`` disagree (empty: identical)."""
    if real.accepted != sim.accepted:
        said = sim.error if not sim.accepted else real.error
        return [f"real server: {real.verdict}, simulated cluster: {sim.verdict} ({said})"]
    if not real.accepted:
        if (real.status == 404) != (sim.status == 404):  # NotFound (a missing namespace) is its own answer
            return [f"real server: HTTP {real.status} ({real.error}), simulated cluster: HTTP {sim.status} ({sim.error})"]
        return []
    found = []
    for sent, r, s in zip(case.documents, real.stored, sim.stored):
        where = f"{r.get('kind')}/{r['metadata'].get('name')}"
        found += [f"{where}: {d}" for d in differences(comparable(r), comparable(s), sent)]
    return found
