"""Preview and capacity results for people: a short sentence on top of a table, and JSON."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from drawb.plan.capacity import Capacity
from drawb.plan.preview import Preview, rows

if TYPE_CHECKING:
    import pandas as pd

PREVIEW_COLUMNS = ["node", "claim", "request", "device", "product", "memory", "profile", "pick", "driver", "pool"]
CAPACITY_COLUMNS = ["node", "copies", "exhausted", "free_mig", "counters_left"]


@dataclass
class Report:
    """A sentence and a table; the table is ``.frame``, the JSON form ``.to_dict()``."""

    sentence: str
    frame: pd.DataFrame
    data: dict[str, Any] = field(default_factory=dict)
    exit_status: int = 0  # the CLI's: 0 when something fits, 1 when nothing does

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.sentence, **self.data, "rows": self.frame.to_dict(orient="records")}

    def __str__(self) -> str:
        import pandas as pd

        with pd.option_context("display.width", 250, "display.max_rows", 60):
            table = "(no rows)" if self.frame.empty else self.frame.to_string(index=False)
        return f"{self.sentence}\n{table}"

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        return f"<p>{html.escape(self.sentence)}</p>" + self.frame.to_html(index=False, max_rows=60)


def _reasons(rejected: dict[str, int]) -> str:
    return "; ".join(f"{count} {reason}" for reason, count in sorted(rejected.items()))


def preview_report(result: Preview, where: str, simulated: bool) -> Report:
    """``where``: the cluster's description and version, named in the sentence."""
    import pandas as pd

    workload = result.workload
    columns = rows(result.fits, result.allocating, result.pick)
    frame = pd.DataFrame(columns if columns["node"] else [], columns=PREVIEW_COLUMNS)
    who = "the simulated scheduler" if simulated else "drawb (nodes in name order; the real scheduler scores the nodes that fit and may pick another)"
    data = {"target": workload.label, "namespace": workload.namespace, "cluster": where, "simulated": simulated,
            "pick": result.pick, "fits": [f.node for f in result.fits], "nodes": result.node_count,
            "rejected": dict(result.rejected), "error": result.error}
    if result.error:
        sentence = f"{workload.label} cannot be placed: the scheduler would stop with an error: {result.error} ({where})"
        return Report(sentence, frame, data, exit_status=1)
    if workload.bound_node:
        sentence = f"{workload.label} is already bound to node {workload.bound_node} ({where})"
        return Report(sentence, frame, data)
    if not result.fits:
        sentence = (f"{workload.label} fits on none of the {result.node_count} nodes now: "
                    f"{_reasons(result.rejected) or 'there are no nodes'} ({where})")
        return Report(sentence, frame, data, exit_status=1)
    rest = f"; not on {sum(result.rejected.values())}: {_reasons(result.rejected)}" if result.rejected else ""
    already = (f" (claims {', '.join(c['metadata']['name'] for c in workload.claims if c not in result.allocating)} "
               "are allocated already)") if len(result.allocating) < len(workload.claims) else ""
    sentence = (f"{workload.label} fits on {len(result.fits)} of {result.node_count} nodes now{rest}; "
                f"{who} picks {result.pick}{already} ({where})")
    return Report(sentence, frame, data)


def _counts(values: dict[str, int]) -> str:
    return ", ".join(f"{n}x {k}" for k, n in sorted(values.items()))


def capacity_report(result: Capacity, where: str) -> Report:
    import pandas as pd

    workload = result.workload
    table = [{"node": n.node, "copies": n.copies, "exhausted": n.exhausted, "free_mig": _counts(n.free_mig),
              "counters_left": ", ".join(f"{k} {v}" for k, v in n.counters_left.items())} for n in result.nodes]
    frame = pd.DataFrame(table, columns=CAPACITY_COLUMNS)
    data = {"target": workload.label, "namespace": workload.namespace, "cluster": where, "total": result.total,
            "nodes": result.node_count, "nodes_with_room": sum(1 for n in result.nodes if n.copies),
            "rejected": dict(result.rejected), "error": result.error}
    if result.error:
        return Report(f"no copy of {workload.label} can be placed: the scheduler would stop with an error: "
                      f"{result.error} ({where})", frame, data, exit_status=1)
    with_room = [n for n in result.nodes if n.copies]
    limits: dict[str, int] = {}
    for n in with_room or result.nodes:
        limits[n.exhausted] = limits.get(n.exhausted, 0) + 1
    first = max(limits.items(), key=lambda kv: kv[1])[0] if limits else None
    free_mig: dict[str, int] = {}
    for n in result.nodes:
        for profile, count in n.free_mig.items():
            free_mig[profile] = free_mig.get(profile, 0) + count
    parts = [f"{result.total} more {'copy' if result.total == 1 else 'copies'} of {workload.label} fit now, "
             f"on {len(with_room)} of {result.node_count} nodes"]
    if any(n.capped for n in result.nodes):
        parts[0] = "at least " + parts[0]
    if first:
        parts.append(f"what runs out first: {first} (on {limits[first]} of the {len(with_room or result.nodes)} nodes)")
    if result.rejected:
        parts.append(f"not on {sum(result.rejected.values())}: {_reasons(result.rejected)}")
    if free_mig:
        parts.append(f"left free and unusable by a copy: {_counts(free_mig)} MIG devices")
    data["free_mig"] = free_mig
    sentence = "; ".join(parts) + f" ({where})"
    return Report(sentence, frame, data, exit_status=0 if result.total else 1)
