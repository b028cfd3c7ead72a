"""Judge a check pod: did each container see exactly the devices allocated to its claim? (pure, no I/O)

Devices are matched on UUIDs, never on indexes (they restart at 0 in a container): a full GPU by
its ``uuid`` attribute (``GPU-...``), a MIG device by its own ``uuid`` (``MIG-...``) and, beside
it, the parent GPU it is listed under (``parentUUID``). A MIG device published without a ``uuid``
(the driver's DynamicMIG gate: the UUID exists only once prepared) is matched by parent and profile.
``--query-gpu`` CSV lists GPUs only, so with that payload a MIG device is matched by its parent.
"""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, field

from drawb.gpu.smi_parse import SmiParseError, parse_list, parse_query_csv

PASS = "PASS"
MISMATCH = "MISMATCH"
NO_GPU_VISIBLE = "NO GPU VISIBLE"
FAILED = "FAILED"
TIMEOUT = "TIMEOUT"
NO_DEVICES_TEXT = "No devices were found"  # what nvidia-smi prints (exit 6) in a container without a GPU

LIST, QUERY, SAMPLE = "list", "query", "sample"
QUERY_FIELDS = "index,uuid,name,memory.total,driver_version"


@dataclass(frozen=True)
class Expected:
    """A device allocated to the check's claim, as its ResourceSlice publishes it."""

    pool: str
    device: str
    type: str  # "gpu" or "mig"
    uuid: str | None
    parent_uuid: str | None = None
    profile: str | None = None
    product: str | None = None

    @property
    def label(self) -> str:
        """``gpu-0 (GPU-...)`` or ``gpu-4-mig-... (MIG-... on GPU-...)``."""
        if self.type == "mig":
            own = self.uuid or f"{self.profile}, no uuid published"
            return f"{self.device} ({own} on {self.parent_uuid})"
        return f"{self.device} ({self.uuid})"


@dataclass(frozen=True)
class Seen:
    """What one container's nvidia-smi output shows: GPU UUIDs and (MIG UUID, parent UUID, profile)."""

    gpus: tuple[str, ...] = ()
    migs: tuple[tuple[str, str, str], ...] = ()

    @property
    def empty(self) -> bool:
        """No GPU and no MIG device."""
        return not self.gpus and not self.migs


@dataclass(frozen=True)
class ContainerResult:
    """One container's end: exit code, log lines and the comparison with its devices."""

    name: str
    exit_code: int | None
    lines: tuple[str, ...]
    seen: Seen | None = None
    missing: tuple[str, ...] = ()  # allocated, not seen
    unexpected: tuple[str, ...] = ()  # seen, not allocated
    problem: str = ""


def device_attr(device: dict, name: str):
    """The value of a ResourceSlice device attribute (short or ``gpu.nvidia.com/``-qualified), or None."""
    attributes = device.get("attributes") or {}
    value = attributes.get(name) or attributes.get(f"gpu.nvidia.com/{name}")
    return None if value is None else next(iter(value.values()))


def expected_device(pool: str, device: dict) -> Expected:
    """An allocated ResourceSlice device as the check compares it."""
    return Expected(
        pool=pool, device=device["name"], type=device_attr(device, "type") or "gpu", uuid=device_attr(device, "uuid"),
        parent_uuid=device_attr(device, "parentUUID"), profile=device_attr(device, "profile"),
        product=device_attr(device, "productName"),
    )


def parse_seen(lines: list[str], payload: str) -> Seen:
    """The devices a container's output shows; SmiParseError if the output is not nvidia-smi's."""
    if not any(line.strip() for line in lines):
        return Seen()
    if payload == QUERY:
        rows = parse_query_csv("\n".join(lines))
        if rows and "uuid" not in rows[0]:
            raise SmiParseError("--query-gpu output has no uuid column")
        return Seen(gpus=tuple(r["uuid"] for r in rows if r["uuid"]))
    listing = lines
    if payload == SAMPLE:  # nvidia-smi -L runs first; the sample's own output follows
        listing = []
        for line in lines:
            try:
                parse_list("\n".join([*listing, line]))
            except SmiParseError:
                break
            listing.append(line)
    gpus, migs = [], []
    for gpu in parse_list("\n".join(listing)):
        if gpu.migs:
            migs += [(m.uuid, gpu.uuid, m.profile) for m in gpu.migs]
        else:
            gpus.append(gpu.uuid)
    return Seen(gpus=tuple(gpus), migs=tuple(migs))


def compare(expected: list[Expected], seen: Seen, payload: str) -> tuple[list[str], list[str]]:
    """(allocated but not seen, seen but not allocated), each as readable device labels."""
    missing: list[str] = []
    if payload == QUERY:  # GPUs only: a MIG device shows as its parent
        want = {e.uuid if e.type != "mig" else e.parent_uuid: e for e in expected}
        missing = [f"{e.label}" for u, e in want.items() if u not in seen.gpus]
        unexpected = [f"GPU {u}" for u in seen.gpus if u not in want]
        return missing, unexpected
    full = {e.uuid: e for e in expected if e.type != "mig"}
    missing += [e.label for u, e in full.items() if u not in seen.gpus]
    unexpected = [f"GPU {u}" for u in seen.gpus if u not in full]
    unmatched = list(seen.migs)
    for e in (e for e in expected if e.type == "mig"):
        match = next((m for m in unmatched if (m[0] == e.uuid if e.uuid else (m[1], m[2]) == (e.parent_uuid, e.profile))),
                     None)
        if match is None:
            missing.append(e.label)
        elif match[1] != e.parent_uuid:
            unmatched.remove(match)
            missing.append(e.label)
            unexpected.append(f"MIG {match[0]} on GPU {match[1]} (allocated on {e.parent_uuid})")
        else:
            unmatched.remove(match)
    unexpected += [f"MIG {m[0]} on GPU {m[1]}" for m in unmatched]
    return missing, unexpected


def judge_container(name: str, exit_code: int | None, lines: list[str], expected: list[Expected],
                    payload: str) -> ContainerResult:
    """One container's result: its output parsed and compared with the allocated devices."""
    text_lines = tuple(lines)
    if any(NO_DEVICES_TEXT in line for line in lines):
        return ContainerResult(name, exit_code, text_lines, Seen(), problem=NO_DEVICES_TEXT)
    try:
        seen = parse_seen(list(lines), payload)
    except SmiParseError as exc:
        return ContainerResult(name, exit_code, text_lines, problem=f"output not understood: {exc}")
    missing, unexpected = compare(expected, seen, payload)
    return ContainerResult(name, exit_code, text_lines, seen, tuple(missing), tuple(unexpected))


@dataclass(frozen=True)
class Stage:
    """A step the check observed, seconds after it started."""

    at: float
    stage: str
    message: str

    def __str__(self) -> str:
        return f"[{self.at:5.1f}s] {self.stage:<10} {self.message}"


@dataclass
class Verdict:
    """The result of one check: PASS, MISMATCH, NO GPU VISIBLE, FAILED or TIMEOUT, with the evidence."""

    status: str
    reason: str
    run_id: str
    namespace: str
    pod: str
    claim: str | None = None
    node: str | None = None
    payload: str = LIST
    expected: list[Expected] = field(default_factory=list)
    containers: list[ContainerResult] = field(default_factory=list)
    stages: list[Stage] = field(default_factory=list)
    seconds: float = 0.0
    cleaned_up: list[str] = field(default_factory=list)
    kept: bool = False
    cluster: str = ""

    @property
    def passed(self) -> bool:
        """Whether the pod saw exactly its devices."""
        return self.status == PASS

    @property
    def exit_status(self) -> int:
        """What ``drawb check`` exits with: 0 on PASS, else 1."""
        return 0 if self.passed else 1

    def summary(self) -> str:
        """One line: the verdict and why."""
        return f"{self.status}: {self.reason}"

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return {
            "status": self.status, "reason": self.reason, "runId": self.run_id, "cluster": self.cluster,
            "namespace": self.namespace, "pod": self.pod, "claim": self.claim, "node": self.node,
            "payload": self.payload, "seconds": round(self.seconds, 3),
            "expected": [asdict(e) for e in self.expected],
            "containers": [{**asdict(c), "seen": asdict(c.seen) if c.seen else None} for c in self.containers],
            "stages": [asdict(s) for s in self.stages],
            "cleanedUp": self.cleaned_up, "kept": self.kept,
        }

    def __str__(self) -> str:
        lines = [self.summary(), f"  pod {self.namespace}/{self.pod}" + (f" on node {self.node}" if self.node else "")
                 + (f", claim {self.claim}" if self.claim else "") + f", {self.seconds:.1f} s"]
        if self.expected:
            lines.append("  allocated: " + "; ".join(e.label for e in self.expected))
        for c in self.containers:
            if c.missing:
                lines.append(f"  {c.name}: allocated but not seen: " + "; ".join(c.missing))
            if c.unexpected:
                lines.append(f"  {c.name}: seen but not allocated: " + "; ".join(c.unexpected))
        if self.status in (FAILED, TIMEOUT):
            for c in self.containers:
                ended = f"exit code {c.exit_code}" if c.exit_code is not None else "still running"
                lines.append(f"  {c.name}: {ended}; last lines:")
                lines += [f"    {line}" for line in c.lines[-10:]] or ["    (no output)"]
        if self.kept:
            lines.append(f"  kept (--keep): objects labelled drawb/check-run={self.run_id}")
        elif self.cleaned_up:
            lines.append("  cleaned up: " + ", ".join(self.cleaned_up))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#cf222e"
        body = html.escape("\n".join(str(self).splitlines()[1:]))
        return (f"<div><p style='font-size:1.1em'><b style='color:{colour}'>{html.escape(self.status)}</b> "
                f"{html.escape(self.reason)}</p><pre>{body}</pre></div>")



def decide(containers: list[ContainerResult]) -> tuple[str, str]:
    """The status and reason for containers that all ended."""
    blind = [c.name for c in containers if c.problem == NO_DEVICES_TEXT]
    if blind:
        return NO_GPU_VISIBLE, f"container(s) {', '.join(blind)}: nvidia-smi says {NO_DEVICES_TEXT!r}"
    failed = [c for c in containers if c.exit_code not in (0, None) or c.seen is None]
    if failed:
        c = failed[0]
        why = f"{c.problem} (exit code {c.exit_code})" if c.problem else f"exit code {c.exit_code}"
        return FAILED, f"container {c.name}: {why}"
    blind = [c.name for c in containers if c.seen.empty]
    if blind:
        return NO_GPU_VISIBLE, f"container(s) {', '.join(blind)} printed no GPU"
    wrong = [c for c in containers if c.missing or c.unexpected]
    if wrong:
        parts = []
        for c in wrong:
            bits = []
            if c.missing:
                bits.append("allocated but not seen: " + "; ".join(c.missing))
            if c.unexpected:
                bits.append("seen but not allocated: " + "; ".join(c.unexpected))
            parts.append(f"{c.name}: " + ", ".join(bits))
        return MISMATCH, " | ".join(parts)
    count = len(containers[0].seen.gpus) + len(containers[0].seen.migs) if containers else 0
    who = "each container" if len(containers) > 1 else "the container"
    return PASS, f"{who} saw exactly the {count} device(s) allocated to its claim"
