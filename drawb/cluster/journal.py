"""The journal of one apply: each write it is about to make, on disk before the write is sent, so a rollback
can undo exactly those writes, in the same process or, when that process was killed or lost the API server,
in the next drawb command that reaches the same server (or ``drawb cleanup``).

One JSON line per entry in ``applies/<run>.jsonl`` of drawb's state folder (``drawb.cluster.state_folder``): the first names the run, its process
(host/pid/start, as ``drawb.cluster.owner`` writes it) and the API server; each next one an object about to
be written, with its state before the write when it existed (None: the write creates it). Every object the
run writes carries ``APPLY_RUN_LABEL`` with the run's id, which tells a rollback which objects are still as
that run left them. The file is removed once the apply succeeded or was rolled back; a line cut short by a
kill is a write that was never sent.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from drawb.cluster.owner import still_running, this_process
from drawb.cluster.state_folder import STATE_HOME_ENV, state_dir
from drawb.errors import DrawbError

APPLY_RUN_LABEL = "drawb/apply-run"
_ACTIVE: set[str] = set()  # runs of this process whose apply is still under way


class JournalUnwritable(DrawbError):
    """The apply journal cannot be written: drawb does not write what it could not roll back."""


def with_run_label(obj: dict, run: str) -> dict:
    """A copy of ``obj`` labelled as written by apply run ``run`` (its own metadata only: the claims a template
    makes belong to their pods)."""
    meta = dict(obj.get("metadata") or {})
    meta["labels"] = {**(meta.get("labels") or {}), APPLY_RUN_LABEL: run}
    return {**obj, "metadata": meta}


def journal_dir() -> Path:
    """The folder of the journals of applies under way or cut short."""
    return state_dir() / "applies"


@dataclass(frozen=True)
class Write:
    """One object an apply writes: where it is, and what it was before (None: the write creates it)."""

    kind: str
    namespace: str | None
    name: str
    previous: dict | None = None

    @property
    def label(self) -> str:
        """``Kind/name``."""
        return f"{self.kind}/{self.name}"

    @classmethod
    def of(cls, obj: dict, previous: dict | None) -> Write:
        """The write of ``obj`` over ``previous`` (None: a new object), kept without its status and managedFields,
        which a rollback does not put back."""
        meta = obj["metadata"]
        if previous is not None:
            kept = {k: v for k, v in (previous.get("metadata") or {}).items() if k != "managedFields"}
            previous = {**{k: v for k, v in previous.items() if k != "status"}, "metadata": kept}
        return cls(obj["kind"], meta.get("namespace"), meta["name"], previous)


@dataclass
class Journal:
    """The journal of one apply run (on disk from its first write on)."""

    run: str
    owner: str
    server: str
    path: Path
    writes: list[Write] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    _file: object = field(default=None, repr=False)

    @classmethod
    def start(cls, server: str) -> Journal:
        """The journal of a new run against ``server``; written from its first ``record``."""
        run = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
        _ACTIVE.add(run)
        return cls(run, this_process(), server, journal_dir() / f"{run}.jsonl")

    def record(self, write: Write) -> None:
        """Add ``write`` to the journal on disk; call it before sending the write."""
        try:
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115  (open for the run's length)
                self._line({"run": self.run, "owner": self.owner, "server": self.server, "started": self.started})
            self._line({"kind": write.kind, "namespace": write.namespace, "name": write.name,
                        "previous": write.previous})
        except OSError as exc:
            raise JournalUnwritable(f"cannot write the apply journal {self.path}: {exc.strerror or exc}",
                                    hint=f"make {state_dir()} writable, or set ${STATE_HOME_ENV} to a folder drawb may "
                                         "write; nothing past this point was written to the cluster") from None
        self.writes.append(write)

    def _line(self, entry: dict) -> None:
        self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self, *, keep: bool = False) -> None:
        """The run is over: remove the journal, or ``keep`` it for the next command to finish its rollback."""
        _ACTIVE.discard(self.run)
        if self._file is not None:
            self._file.close()
            self._file = None
        if not keep:
            try:
                self.path.unlink(missing_ok=True)
            except OSError:  # a state folder that could not be made: no journal was written
                pass

    @property
    def process(self) -> str:
        """``pid N on HOST`` of the run's process, for messages."""
        host, _, rest = self.owner.partition("/")
        return f"pid {rest.partition('/')[0]} on {host}"

    @classmethod
    def read(cls, path: Path) -> Journal | None:
        """The journal in ``path``; None when it is not one (a line cut short ends it)."""
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return None
        entries = []
        for line in lines:
            try:
                entries.append(json.loads(line))
            except ValueError:
                break  # the last line, cut short by a kill: a write never sent
        if not entries or "run" not in entries[0]:
            return None
        head = entries[0]
        writes = [Write(e["kind"], e.get("namespace"), e["name"], e.get("previous")) for e in entries[1:]]
        return cls(head["run"], head.get("owner", ""), head.get("server", ""), path, writes, head.get("started", 0.0))


def left_by_dead_runs(server: str) -> list[Journal]:
    """The journals of runs against ``server`` whose process no longer runs (or is this one, past that apply),
    oldest first."""
    found = []
    for path in sorted(journal_dir().glob("*.jsonl")):
        journal = Journal.read(path)
        if journal is None or journal.server != server or journal.run in _ACTIVE:
            continue
        if journal.owner == this_process() or still_running(journal.owner) is False:
            found.append(journal)
    return found
