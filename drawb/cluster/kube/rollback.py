"""Undo an apply from its journal: delete what it created, put back what it changed.

Only an object that still carries the run's label (``APPLY_RUN_LABEL``) is touched: one the run never
reached, or that another writer has made or changed since, is left as it is. Writes are undone newest
first. While the API server does not answer (stopped, restarting, unreachable), each undo is retried for
up to ``wait_s`` seconds without an answer; a refusal is final for that object.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kubernetes.client import ApiClient

from drawb.cluster.journal import APPLY_RUN_LABEL, Journal, Write
from drawb.cluster.kube.rest import Timeouts, request, timeouts_of
from drawb.cluster.protocol import FIELD_MANAGER, ClusterError, NotConnected, kind_of
from drawb.errors import PROG

ROLLBACK_WAIT_S = 10.0  # how long a rollback in the apply's own process waits for a server that does not answer
RETRY_S = 0.5
SETTLE_S = 1.0  # a write sent but never answered may still land this long after the server answers again
_TRANSIENT = {429, 500, 502, 503, 504}


@dataclass
class Rollback:
    """What a rollback undid, and what it could not."""

    journal: Journal
    removed: list[Write] = field(default_factory=list)
    restored: list[Write] = field(default_factory=list)
    remaining: list[Write] = field(default_factory=list)
    failure: str | None = None  # why ``remaining`` were not undone

    def summary(self) -> str:
        """What was undone, in words: ``removed 35 object(s) it created: ResourceClaim in ns: a, b``."""
        done = []
        if self.removed:
            done.append(f"removed {len(self.removed)} object(s) it created: {named(self.removed)}")
        if self.restored:
            done.append(f"restored {len(self.restored)} object(s) it changed: {named(self.restored)}")
        return "; ".join(done) or ("nothing was written" if not self.journal.writes else "nothing of it had landed")

    def sentence(self) -> str:
        """One line for the apply's own error: what was rolled back, and what may remain and who removes it."""
        if self.remaining and not (self.removed or self.restored):
            return f"could not roll back apply run {self.journal.run} ({self.failure}): {self._may_remain()}"
        text = f"rolled back apply run {self.journal.run}: {self.summary()}"
        return text + (f"; {self.left_behind()}" if self.remaining else "")

    def finished_line(self) -> str:
        """One line for the command that finished (or tried to finish) the rollback of a run cut short."""
        run = f"apply run {self.journal.run} ({self.journal.process}, cut short before it could roll back)"
        if self.remaining and not (self.removed or self.restored):
            return f"could not finish the rollback of {run} ({self.failure}): {self._may_remain()}"
        text = f"finished the rollback of {run}: {self.summary()}"
        return text + (f"; {self.left_behind()}" if self.remaining else "")

    def left_behind(self) -> str:
        """Why the rollback stopped short, what may remain, and the command that finishes the rollback."""
        return f"could not finish ({self.failure}): {self._may_remain()}"

    def _may_remain(self) -> str:
        return (f"{len(self.remaining)} object(s) may remain: {named(self.remaining)}; the next {PROG} command "
                f"against this cluster removes them, or `{PROG} cleanup`")


def named(writes: list[Write]) -> str:
    """``ResourceClaim in ns-a: c-1, c-2; Namespace: ns-a``: every object, grouped by kind and namespace."""
    groups: dict[tuple[str, str | None], list[str]] = {}
    for write in writes:
        groups.setdefault((write.kind, write.namespace), []).append(write.name)
    return "; ".join(f"{kind}{f' in {namespace}' if namespace else ''}: {', '.join(names)}"
                     for (kind, namespace), names in groups.items())


def roll_back(client: ApiClient, journal: Journal, *, wait_s: float = 0.0, last_unanswered: bool = False,
              progress: Callable[[str, int, int], None] | None = None) -> Rollback:
    """Undo ``journal``'s writes, newest first, waiting up to ``wait_s`` seconds at a time for a server that does
    not answer; the journal is removed once nothing is left to undo, else kept for a later rollback.

    ``last_unanswered``: the newest write was sent and never answered (a lost connection, a timeout, an
    interrupt): found absent, it is looked for again ``SETTLE_S`` after the server answers, as it may land late."""
    step = progress or (lambda what, done, total: None)
    outcome = Rollback(journal)
    pending = list(reversed(journal.writes))
    started = time.monotonic()
    answered_at = None
    unsure = None  # the newest write when the server did not say it had landed: it may land later
    bounded = Timeouts(*(min(s or 5.0, 5.0) for s in timeouts_of(client).pair()))
    deadline = started + wait_s
    try:
        while pending:
            write = pending[0]
            step("rolling back", len(journal.writes) - len(pending) + 1, len(journal.writes))
            try:
                done = _undo(client, journal.run, write, bounded)
            except ClusterError as exc:
                if not _transient(exc):
                    outcome.remaining.append(pending.pop(0))
                    outcome.failure = str(exc)
                    continue
                if time.monotonic() >= deadline:
                    outcome.failure = f"the API server did not answer: {exc}"
                    break
                time.sleep(RETRY_S)
                continue
            answered_at = answered_at or time.monotonic()
            deadline = time.monotonic() + wait_s
            pending.pop(0)
            if done is None and last_unanswered and write is journal.writes[-1]:
                unsure = write
            elif done is not None:
                (outcome.removed if done == "removed" else outcome.restored).append(write)
        if unsure is not None and not pending:  # sent while the apply broke off: it may have landed since
            time.sleep(max(0.0, answered_at + SETTLE_S - time.monotonic()))
            done = _undo(client, journal.run, unsure, bounded)
            if done is not None:
                (outcome.removed if done == "removed" else outcome.restored).append(unsure)
    except ClusterError as exc:
        outcome.failure = f"the API server did not answer: {exc}"
    except KeyboardInterrupt:
        outcome.failure = "interrupted"
    outcome.remaining += pending
    order = {id(write): index for index, write in enumerate(journal.writes)}
    for writes in (outcome.removed, outcome.restored, outcome.remaining):
        writes.sort(key=lambda write: order[id(write)])  # in the order they were written
    journal.close(keep=bool(outcome.remaining))
    return outcome


def pending_writes(client: ApiClient, journal: Journal) -> list[Write]:
    """The writes of ``journal`` a rollback would undo: those whose object still carries the run's label."""
    pending, seen = [], set()
    for write in journal.writes:
        if (write.kind, write.namespace, write.name) in seen:
            continue
        seen.add((write.kind, write.namespace, write.name))
        try:
            current = request(client, "GET", kind_of(write.kind).path(write.namespace, write.name))
        except ClusterError as exc:
            if exc.status == 404:
                continue
            raise
        if ((current.get("metadata") or {}).get("labels") or {}).get(APPLY_RUN_LABEL) == journal.run:
            pending.append(write)
    return pending


def _transient(exc: ClusterError) -> bool:
    return isinstance(exc, NotConnected) or exc.status in _TRANSIENT


def _undo(client: ApiClient, run: str, write: Write, timeouts: Timeouts) -> str | None:
    """Undo one write when the object is still as the run left it: ``removed``, ``restored``, or None (nothing
    of the run's there)."""
    path = kind_of(write.kind).path(write.namespace, write.name)
    pair = timeouts.pair()
    try:
        current = request(client, "GET", path, timeout=pair)
    except ClusterError as exc:
        if exc.status == 404:
            return None
        raise
    meta = current.get("metadata") or {}
    if (meta.get("labels") or {}).get(APPLY_RUN_LABEL) != run:
        return None
    try:
        if write.previous is None:
            request(client, "DELETE", path, timeout=pair, query={"propagationPolicy": "Background"},
                    body={"preconditions": {"uid": meta.get("uid")}})
            return "removed"
        request(client, "PUT", path, timeout=pair, query={"fieldManager": FIELD_MANAGER},
                body=_as_before(write.previous, meta.get("uid")))
        return "restored"
    except ClusterError as exc:
        if exc.status == 404:
            return None
        raise


def _as_before(previous: dict, uid: str | None) -> dict:
    """``previous`` as an update puts it back: its metadata without the server's bookkeeping, the object's uid
    as a precondition (no other object of that name is changed)."""
    meta = {k: v for k, v in (previous.get("metadata") or {}).items()
            if k not in ("resourceVersion", "managedFields", "generation", "creationTimestamp")}
    meta["uid"] = uid
    return {**{k: v for k, v in previous.items() if k != "status"}, "metadata": meta}
