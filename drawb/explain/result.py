"""The answer of ``why``: what state the pod or claim is in, the funnel per request, the stage that
empties, near misses and what would make it fit. Plain text for the command line, HTML for the
notebook, a dict for ``--json``."""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

STAGE_LABELS = {
    "published": "published, in a usable pool",
    "class": "pass the class's selectors",
    "selectors": "pass the request's selectors",
    "free": "not allocated to other claims",
    "taints": "untainted or tolerated",
    "counters": "fit shared counters / capacity",
    "constraints": "fit together with the other requests",
    "node": "on a node the pod may use",
}

# The states of an explanation (``Explanation.state``).
PENDING = "pending"  # the claims cannot be allocated: ``stage`` names why
FITS_NOW = "fits-now"  # drawb finds a node: the scheduler has not (re)tried yet
NOT_CREATED = "claim-not-created"  # a template's claim is not created yet (PreEnqueue: no event)
CLAIM_MISSING = "claim-missing"
CLAIM_DELETING = "claim-being-deleted"
CLASS_MISSING = "device-class-missing"
INVALID = "invalid-claim"  # the allocator refuses the claim (a scheduler error, not unschedulable)
RESERVED_ELSEWHERE = "reserved-by-another-pod"
CLAIM_IN_USE = "claim-in-use"  # reservedFor is full
BINDING = "allocated-not-bound"
ALLOCATED = "allocated"  # bound, or about to be: the claims allocated and reserved (the summary says running or starting)
ENDED = "ended"  # Succeeded or Failed: where it ran, what became of its claims
UNUSED = "not-used-by-a-pod"


@dataclass
class StageCount:
    """How many devices are left after one stage, cluster-wide and on the best node."""

    stage: str
    devices: int
    best_node: str
    best: int
    dropped: int = 0
    examples: list[str] = field(default_factory=list)  # "node/device: reason"


@dataclass
class RequestReport:
    """The funnel of one request (or subrequest) of one claim."""

    claim: str
    request: str
    device_class: str
    wanted: str  # "8", or "all"
    stages: list[StageCount]
    empties: str | None = None  # the first stage after which no node has enough devices
    errors: list[str] = field(default_factory=list)  # selector errors, "node/device: message"


@dataclass
class Remedy:
    """What would make it fit, as a change drawb can describe exactly.

    ``kind``: ``drop-selectors`` / ``lower-count`` / ``tolerate`` / ``drop-constraints`` (edit the claim:
    a claim's spec cannot change, so it is created again with the change), ``free`` (delete or end the
    claims in ``claims``), ``allow-nodes`` (let the pod use ``nodes``), ``wait``."""

    kind: str
    text: str
    claim: str | None = None
    request: str | None = None
    claims: list[str] = field(default_factory=list)
    tolerations: list[dict] = field(default_factory=list)
    count: int | None = None
    nodes: list[str] = field(default_factory=list)


@dataclass
class AllocatedDevice:
    """One device of an allocated claim, with why the allocator chose it."""

    request: str
    device: str  # pool/device
    node: str
    attributes: dict[str, object]


class Answer:
    """What the answers of ``why`` (a dataclass each, with ``target``, ``state``, ``summary`` and ``simulated``)
    share: their opening, their data for ``--json``, their text in IPython."""

    SIMULATED = "simulated cluster: the scheduler here is drawb's simulation"  # said on the simulated cluster

    def to_dict(self) -> dict:
        """The answer as JSON-ready data (a pod explanation inside another as ``why pod`` gives it)."""
        return asdict(self)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))

    def __init_subclass__(cls, **kwargs) -> None:
        # IPython's printer takes, class by class along the MRO, a class's own _repr_pretty_ or else its own
        # __repr__; each answer's @dataclass writes a __repr__ into the answer's class, so the text display
        # is put there too, or IPython would show the dataclass's field-by-field repr.
        super().__init_subclass__(**kwargs)
        cls._repr_pretty_ = Answer._repr_pretty_

    def _opening(self, after_state: str = "") -> list[str]:
        """The text's first lines: what, its state (then ``after_state``), whether simulated, the summary."""
        lines = [f"why {self.target}: {self.state}{after_state}"]
        if self.simulated:
            lines.append(f"({self.SIMULATED})")
        return [*lines, self.summary]

    def _opening_html(self, after_state: str = "") -> list[str]:
        """The same in HTML (``after_state`` is HTML), opening the answer's ``div``."""
        e = html.escape
        parts = [f"<div class='drawb-why'><p><b>why {e(self.target)}</b>: <code>{e(self.state)}</code>{after_state}</p>"]
        if self.simulated:
            parts.append(f"<p><i>{self.SIMULATED}</i></p>")
        return [*parts, f"<p>{e(self.summary)}</p>"]


def section_lines(sections: Iterable[tuple[str, list[str]]]) -> list[str]:
    """Each section that has items as text: a blank line, its title, one ``  - item`` line per item."""
    lines = []
    for title, items in sections:
        if items:
            lines += [f"\n{title}:", *(f"  - {item}" for item in items)]
    return lines


def section_html(sections: Iterable[tuple[str, list[str]]]) -> list[str]:
    """Each section that has items as HTML: its title and a list of the items."""
    return [f"<p>{title}:</p><ul>" + "".join(f"<li>{html.escape(item)}</li>" for item in items) + "</ul>"
            for title, items in sections if items]


@dataclass
class Explanation(Answer):
    """Why a pod (or a claim) is where it is."""

    target: str  # "pod ns/name" or "claim ns/name"
    state: str
    summary: str
    stage: str | None = None  # the first stage that empties (state pending)
    local_stage: str | None = None  # the same among the nodes the pod may use, when it differs
    scheduler: str = ""  # what the scheduler said (PodScheduled condition), or why it says nothing
    requests: list[RequestReport] = field(default_factory=list)
    fits_on: list[str] = field(default_factory=list)  # nodes where the claims fit together
    excluded: dict[str, str] = field(default_factory=dict)  # node -> why the pod may not use it
    near_misses: list[str] = field(default_factory=list)
    remedies: list[Remedy] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    devices: list[AllocatedDevice] = field(default_factory=list)  # allocated claims: the devices
    cited: list[str] = field(default_factory=list)  # every object the explanation names
    kubernetes_version: str = ""
    feature_gates: dict[str, bool] = field(default_factory=dict)
    simulated: bool = False

    def __str__(self) -> str:
        lines = self._opening(f" (first empty stage: {self.stage})" if self.stage else "")
        if self.scheduler:
            lines.append(f"scheduler: {self.scheduler}")
        for report in self.requests:
            lines.append(f"\nclaim {report.claim}, request {report.request} ({report.device_class}, wants {report.wanted}):")
            for count in report.stages:
                mark = "  <- empties" if count.stage == report.empties else ""
                lines.append(f"  {STAGE_LABELS.get(count.stage, count.stage):<40} {count.devices:>6} devices"
                             f"  (best node {count.best_node or '-'}: {count.best}){mark}")
                for example in count.examples:
                    lines.append(f"      dropped: {example}")
            for error in report.errors:
                lines.append(f"  selector error (the scheduler aborts): {error}")
        if self.fits_on:
            lines.append(f"\nfits together on: {', '.join(self.fits_on)}")
        for node, reason in list(self.excluded.items())[:5]:
            lines.append(f"  node {node} excluded: {reason}")
        lines += section_lines(self._sections())
        if self.devices:
            lines.append("\ndevices:")
            for d in self.devices:
                attrs = ", ".join(f"{k}={v}" for k, v in d.attributes.items())
                lines.append(f"  {d.request}: {d.device} on {d.node}" + (f" ({attrs})" if attrs else ""))
        lines.append(f"\n(allocator of Kubernetes {self.kubernetes_version}"
                     + (", gates on: " + ", ".join(g for g, v in sorted(self.feature_gates.items()) if v) if self.feature_gates else "")
                     + ")")
        return "\n".join(lines)

    def _sections(self) -> list[tuple[str, list[str]]]:
        return [("near misses", self.near_misses), ("what would make it fit", [r.text for r in self.remedies]),
                ("notes", self.notes)]

    def _repr_html_(self) -> str:
        e = html.escape
        parts = self._opening_html(f", first empty stage <b>{e(self.stage)}</b>" if self.stage else "")
        if self.scheduler:
            parts.append(f"<p>scheduler: <code>{e(self.scheduler)}</code></p>")
        for report in self.requests:
            red = ' style="background:#fdd"'
            rows = "".join(
                f"<tr{red if c.stage == report.empties else ''}>"
                f"<td>{e(STAGE_LABELS.get(c.stage, c.stage))}</td><td>{c.devices}</td><td>{e(c.best_node)}</td>"
                f"<td>{c.best}</td><td>{'<br>'.join(e(x) for x in c.examples)}</td></tr>"
                for c in report.stages
            )
            parts.append(f"<p>claim <code>{e(report.claim)}</code>, request <code>{e(report.request)}</code> "
                         f"({e(report.device_class)}, wants {e(report.wanted)})</p>"
                         "<table><tr><th>stage</th><th>devices left</th><th>best node</th><th>there</th>"
                         f"<th>dropped (examples)</th></tr>{rows}</table>")
            if report.errors:
                parts.append("<p>selector errors (the scheduler aborts):</p><ul>"
                             + "".join(f"<li>{e(x)}</li>" for x in report.errors) + "</ul>")
        parts += section_html(self._sections())
        if self.devices:
            parts.append("<table><tr><th>request</th><th>device</th><th>node</th><th>attributes</th></tr>" + "".join(
                f"<tr><td>{e(d.request)}</td><td>{e(d.device)}</td><td>{e(d.node)}</td>"
                f"<td>{e(', '.join(f'{k}={v}' for k, v in d.attributes.items()))}</td></tr>" for d in self.devices)
                + "</table>")
        parts.append(f"<p><small>allocator of Kubernetes {e(self.kubernetes_version)}</small></p></div>")
        return "".join(parts)
