"""List+watch of one kind into a local store, with objects kept as raw JSON dicts.

Why not ``kubernetes.informer.SharedInformer``: with a list function that returns raw JSON
(which drawb needs: the generated model classes are slow and drop DRA fields newer than the
client), the official watcher yields the events but never records their resourceVersion, so a
reconnect resumes from the initial list's version and bookmarks are lost. This informer keeps
the same shape (list, watch from the list's resourceVersion with bookmarks, re-list on 410 Gone,
capped backoff, handler errors logged and survived) over raw JSON.

Back on time: while the server is away or starting, a watch is tried again at least every
``RECONNECT_S``, and its backoff starts again once a watch is re-established, so a change shows within
a second or two of the server answering, after any number of outages. A lost watch logs one line (what
failed, when it retries), another only for a new error answer; an expected 410 re-list logs none.
"""

from __future__ import annotations

import logging
import threading
import time

from kubernetes.client import ApiClient

from drawb.cluster.kube.failures import failure_words
from drawb.cluster.kube.rest import list_objects, open_watch, watch_events
from drawb.cluster.protocol import ClusterError, Handler, Kind, NotConnected

log = logging.getLogger(__name__)

WATCH_TIMEOUT_S = 240  # server closes the watch after this; we reconnect from the last version
INITIAL_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
RECONNECT_S = 1.0  # the longest wait between tries while the server is away or not ready
UNAVAILABLE = {429, 500, 502, 503, 504}  # a server starting up or overloaded answers these for a while
QUIET_WATCH_S = 1.0  # a watch open this long (or with an event) was re-established: the backoff starts again
LIST_STALL_S = 30.0  # the first list has stalled when no page has come for this long


def _version(obj: dict) -> str | None:
    return (obj.get("metadata") or {}).get("resourceVersion")


def object_key(obj: dict) -> str:
    """``namespace/name`` or ``name``."""
    meta = obj.get("metadata") or {}
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta.get("name", "")


class Informer:
    """Keeps ``store`` equal to the server's objects of one kind."""

    def __init__(
        self,
        client: ApiClient,
        kind: Kind,
        namespace: str | None = None,
        *,
        watch_timeout_s: int = WATCH_TIMEOUT_S,
        max_backoff_s: float = MAX_BACKOFF_S,
    ):
        self.client, self.kind, self.namespace = client, kind, namespace
        self.watch_timeout_s, self.max_backoff_s = watch_timeout_s, max_backoff_s
        self.store: dict[str, dict] = {}
        self.resource_version: str | None = None
        self.synced = threading.Event()
        self.stats = {"lists": 0, "watches": 0, "expired": 0, "failures": 0, "events": 0}
        self._handlers: list[Handler] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._response = None
        # The first list's progress, for start(): when the last page came, how many objects so far, and
        # why the last attempt failed.
        self._page_at = 0.0
        self._listed = 0
        self._failure: str | None = None
        # The current watch: when it opened and how many events it brought; since when it has been lost.
        self._opened_at: float | None = None
        self._watch_events = 0
        self._lost_at: float | None = None

    def add_handler(self, handler: Handler) -> None:
        """Call ``handler(event_type, obj)`` on every change after the initial list."""
        with self._lock:
            self._handlers = [*self._handlers, handler]

    def subscribe(self, handler: Handler) -> list[dict]:
        """Register ``handler`` and return the objects it has not been told about.

        An event racing the subscription may reach ``handler`` although its object is already in
        the returned snapshot; ADDED/MODIFIED are upserts and DELETED of a missing key is a no-op,
        so consumers stay correct.
        """
        with self._lock:
            self._handlers = [*self._handlers, handler]
            return list(self.store.values())

    def unsubscribe(self, handler: Handler) -> None:
        """Stop calling ``handler`` (a handler not registered is ignored)."""
        with self._lock:
            self._handlers = [h for h in self._handlers if h is not handler]

    def items(self) -> list[dict]:
        """A snapshot of the stored objects."""
        with self._lock:
            return list(self.store.values())

    def start(self, stall_s: float = LIST_STALL_S) -> None:
        """List, start watching in a daemon thread, and wait for the first list for as long as its pages
        keep coming: a list of 100,000 devices on a loaded host takes minutes, a dead one is told
        apart by ``stall_s`` seconds without a page (ClusterError; the thread keeps trying, and a later
        ``start`` waits again)."""
        waiting_since = time.monotonic()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"drawb-informer-{self.kind.plural}", daemon=True)
            self._thread.start()
        while True:
            quiet = time.monotonic() - max(self._page_at, waiting_since)
            if self.synced.wait(max(0.0, min(1.0, stall_s - quiet))):
                return
            if time.monotonic() - max(self._page_at, waiting_since) >= stall_s:
                failure = f"; the last attempt {self._failure}" if self._failure else ""
                raise ClusterError(
                    f"listing {self.kind.plural} stalled: no page for {stall_s:g} s ({self._listed:,} objects "
                    f"listed so far){failure}",
                    hint="check that the API server is up and answering (`kubectl get --raw /readyz`); on a slow "
                    "or overloaded server, retry: the list goes on in the background",
                )

    def stop(self) -> None:
        """Stop watching and join the thread."""
        self._stop.set()  # before reading _response: the thread checks it after setting _response
        response = self._response
        if response is not None:
            try:
                response.shutdown()
            except Exception:  # the connection may already be closed
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def relist(self) -> None:
        """Replace the store with a fresh list and remember its resourceVersion.

        After the first list, handlers hear of what changed since the store's last state: DELETED for
        what is gone, ADDED for what is new, MODIFIED for what has another resourceVersion; objects
        that did not change are not announced again.
        """
        objects, version = list_objects(self.client, self.kind, self.namespace, self._on_page)
        self.stats["lists"] += 1
        items = {object_key(obj): obj for obj in objects}
        with self._lock:
            old, self.store = self.store, items
        self.resource_version = version
        if self.synced.is_set():
            for key in old.keys() - items.keys():
                self._fire("DELETED", old[key])
            for key, obj in items.items():
                if key not in old:
                    self._fire("ADDED", obj)
                elif _version(old[key]) != _version(obj):
                    self._fire("MODIFIED", obj)
        self.synced.set()

    def _on_page(self, objects: int) -> None:
        self._page_at, self._listed = time.monotonic(), objects

    def _run(self) -> None:
        backoff = INITIAL_BACKOFF_S
        while not self._stop.is_set():
            listed = self.resource_version is None  # the watch starts from a list made just now
            self._opened_at, self._watch_events = None, 0
            try:
                if listed:
                    self.relist()
                self._watch_once()
                if self._established():
                    self._recovered()
                    backoff = INITIAL_BACKOFF_S
                    continue  # the server ended the watch at its timeout: resume at once
                problem, unavailable = "ended at once without an event", False
            except ClusterError as exc:
                if exc.status == 410 and not listed:
                    # Expected: the version it resumes from is older than the server keeps (etcd compacted,
                    # or a restart rebuilt the watch cache). List again at once; nothing to report.
                    log.debug("watch of %s expired (410 Gone); listing again", self.kind.plural)
                    self.stats["expired"] += 1
                    self.resource_version = None
                    continue
                if exc.status == 410:
                    problem, unavailable = "expired right after a fresh list (410 Gone)", False
                    self.stats["expired"] += 1
                    self.resource_version = None
                else:
                    problem, unavailable = f"failed: {exc}", isinstance(exc, NotConnected) or exc.status in UNAVAILABLE
            except Exception as exc:  # the connection broke mid-stream
                problem, unavailable = f"broke: {failure_words(exc)}", True
            if self._stop.is_set():
                return
            if self._established():  # it had been back for a while: this is a new outage
                self._recovered()
                backoff = INITIAL_BACKOFF_S
            # a server that is away or starting is tried again soon (a refused connection costs it nothing), so a
            # watch is back within a second or two of the server; one that answers with an error is backed off
            wait = min(backoff, RECONNECT_S) if unavailable else backoff
            self.stats["failures"] += 1
            self._report(problem, wait, unavailable)
            self._stop.wait(wait)
            backoff = min(backoff * 2, self.max_backoff_s)

    def _established(self) -> bool:
        """Whether the last watch was opened and then worked: an event came, or it stayed open a while."""
        return self._opened_at is not None and (
            self._watch_events > 0 or time.monotonic() - self._opened_at >= QUIET_WATCH_S)

    def _report(self, problem: str, wait: float, unavailable: bool) -> None:
        """One line when the watch is lost; while it stays lost, one more only for a new reason that will not
        pass by itself (an error answer, not the server being away or starting)."""
        line = f"watch of {self.kind.plural} {problem}; retrying in {wait:.1f} s"
        if self._lost_at is None or (not unavailable and problem != self._failure):
            log.warning("%s", line)
        else:
            log.debug("%s", line)
        if self._lost_at is None:
            self._lost_at = time.monotonic()
        self._failure = problem

    def _recovered(self) -> None:
        if self._lost_at is not None:
            log.info("watch of %s is back after %.1f s", self.kind.plural, time.monotonic() - self._lost_at)
        self._lost_at, self._failure = None, None

    def _watch_once(self) -> None:
        """Watch from the stored version until the server ends the watch."""
        response = open_watch(self.client, self.kind, self.resource_version, self.watch_timeout_s, self.namespace)
        self.stats["watches"] += 1
        self._opened_at = time.monotonic()
        self._response = response
        if self._stop.is_set():  # stop() ran before the response was there to shut down
            response.close()
            return
        try:
            for event in watch_events(response):
                self._watch_events += 1
                self._on_event(event)
        finally:
            self._response = None

    def _on_event(self, event: dict) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if kind == "BOOKMARK":
            self.resource_version = version or self.resource_version
            return
        obj.setdefault("apiVersion", self.kind.api_version)
        obj.setdefault("kind", self.kind.kind)
        key = object_key(obj)
        with self._lock:
            if kind == "DELETED":
                self.store.pop(key, None)
            else:
                self.store[key] = obj
        self.resource_version = version or self.resource_version
        self.stats["events"] += 1
        self._fire(kind, obj)

    def _fire(self, kind: str, obj: dict) -> None:
        for handler in self._handlers:  # replaced, never changed in place: safe to iterate
            try:
                handler(kind, obj)
            except Exception:
                log.exception("informer handler for %s failed", self.kind.plural)
