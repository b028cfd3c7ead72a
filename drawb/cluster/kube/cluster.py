"""KubeCluster: the Cluster protocol over a real API server."""

from __future__ import annotations

import dataclasses

import re
from collections.abc import Callable, Iterator

from kubernetes.client import ApiClient

from drawb.cluster.kube.context import read_context
from drawb.cluster.kube.credentials import kubeconfig_configuration
from drawb.cluster.kube.in_cluster import in_cluster_configuration
from drawb.cluster.kube.informer import Informer
from drawb.cluster.kube.rest import Timeouts, list_objects, request, stream_lines, timeouts_of
from drawb.cluster.kube.rights import missing_rights
from drawb.cluster.kube.rollback import ROLLBACK_WAIT_S, Rollback, pending_writes, roll_back
from drawb.cluster.journal import Journal, Write, left_by_dead_runs, with_run_label
from drawb.cluster.protocol import (
    FIELD_MANAGER,
    KINDS,
    ClusterError,
    DryRunObjects,
    NotManagedByDrawb,
    about_object,
    group_version_path,
    is_managed,
    kind_of,
    with_managed_label,
)
from drawb.cluster.refusal import Right
from drawb.cluster.service_account import ServiceAccountMount
from drawb.cluster.pod_account import pod_service_account
from drawb.errors import DrawbError
from drawb.redact import redact

_FEATURE_METRIC = re.compile(r'^kubernetes_feature_enabled\{name="([^"]+)"[^}]*\} (\d)', re.MULTILINE)


def _checked_when_applied(labelled: list[dict], before: list[dict | None]) -> list[bool]:
    """Which of ``labelled`` cannot be dry-run, because the server looks for an object this call creates and a
    dry run creates nothing: an object in a new Namespace, and a Pod that runs as a new ServiceAccount applied
    before it (the ServiceAccount admission plugin refuses a pod whose account does not exist; one applied
    after the pod fails the dry run, as it would fail kubectl). The server checks them when they are applied,
    after what they need, and a refusal then undoes the call. ``before``: what exists of each, or None."""
    new_namespaces = {o["metadata"]["name"] for o, was in zip(labelled, before)
                      if o.get("kind") == "Namespace" and was is None}
    new_accounts: set[tuple[str, str]] = set()
    waits = []
    for obj, was in zip(labelled, before):
        namespace = obj["metadata"].get("namespace")
        where = namespace or "default"  # Pods and ServiceAccounts are namespaced
        waits.append(namespace in new_namespaces
                     or (obj.get("kind") == "Pod" and (where, pod_service_account(obj)) in new_accounts))
        if obj.get("kind") == "ServiceAccount" and was is None:
            new_accounts.add((where, obj["metadata"]["name"]))
    return waits


class KubeCluster:
    """A cluster reached through a kubeconfig (default: ``$KUBECONFIG`` or ``~/.kube/config``), or from inside a
    pod as its service account (``service_account``)."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None, *,
                 service_account: ServiceAccountMount | None = None, timeouts: Timeouts | None = None,
                 **watch_options):
        """``timeouts`` bound every request; ``watch_options`` go to each Informer (``watch_timeout_s``,
        ``max_backoff_s``)."""
        self._watch_options = watch_options
        if service_account is not None:
            self.client = ApiClient(in_cluster_configuration(service_account))
            identity = service_account.identity()
            self.default_namespace = service_account.namespace()
            self.description = f"cluster at {redact(self.client.configuration.host)} (in-cluster, service account " \
                               f"{identity or 'of the pod'})"
        else:
            kube_context = read_context(kubeconfig, context)
            # the context kubectl would use, also where several files set a current-context
            chosen = context or (kube_context.name if kube_context is not None else None)
            self.client = ApiClient(kubeconfig_configuration(kubeconfig, chosen))
            self.client.kube_context = kube_context  # a 401 names its user (failures.py)
            # where commands work when given no namespace, as kubectl: the context's (None: `default`)
            self.default_namespace = kube_context.namespace if kube_context is not None else None
            host = redact(self.client.configuration.host)
            self.description = f"cluster at {host}" + (f" (context {context})" if context else "")
        self.client.timeouts = timeouts or Timeouts()
        self._informers: dict[tuple[str, str | None], Informer] = {}

    def missing_rights(self, rights: list[Right]) -> tuple[str, list[Right]]:
        """Who this connection authenticates as, and which of ``rights`` RBAC does not give it."""
        return missing_rights(self.client, rights)

    def watch(self, kind: str, namespace: str | None = None) -> Informer:
        """Keep a live store of the ``kind`` objects of ``namespace`` (None: every namespace); later ``list``
        calls of them read from it."""
        namespace = namespace if kind_of(kind).namespaced else None
        informer = self._informers.get((kind, namespace))
        if informer is None:
            # One small list first: a refused one (RBAC) fails here with its reason, not by a timeout.
            request(self.client, "GET", kind_of(kind).path(namespace), query={"limit": 1})
            informer = self._informers[(kind, namespace)] = Informer(self.client, kind_of(kind), namespace,
                                                                     **self._watch_options)
        informer.start()
        return informer

    def close(self) -> None:
        """Stop every watch."""
        for informer in self._informers.values():
            informer.stop()
        self._informers.clear()

    def _path(self, kind: str, namespace: str | None = None, name: str | None = None) -> str:
        return kind_of(kind).path(namespace, name)

    def list(self, kind: str, namespace: str | None = None, *, api_version: str | None = None) -> list[dict]:
        """All objects of ``kind`` (in ``namespace``, or everywhere): from a live store that holds them when one
        is watched, else listed page by page (through ``api_version`` of the kind's group when given)."""
        known = kind_of(kind)
        informer = self._informers.get((kind, None))
        if informer is None or not informer.synced.is_set():
            informer = self._informers.get((kind, namespace)) if namespace is not None else None
        if informer is not None and informer.synced.is_set() and api_version in (None, known.api_version):
            items = informer.items()
            return [o for o in items if namespace is None or o["metadata"].get("namespace") == namespace]
        if api_version is not None:
            known = dataclasses.replace(known, api_version=api_version)
        return list_objects(self.client, known, namespace)[0]

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """One object, or None when the server says it does not exist."""
        try:
            return request(self.client, "GET", self._path(kind, namespace or self._default_ns(kind), name))
        except ClusterError as exc:
            if exc.status == 404:
                return None
            raise

    def _default_ns(self, kind: str) -> str | None:
        return "default" if kind_of(kind).namespaced else None

    def _apply_one(self, obj: dict, dry_run: bool) -> dict:
        meta = obj.get("metadata") or {}
        if not meta.get("name"):
            raise ClusterError(f"{obj.get('kind', 'object')} without metadata.name: every object needs a name")
        kind = obj.get("kind", "")
        query = {"fieldManager": FIELD_MANAGER, "force": "true", "dryRun": "All" if dry_run else None}
        # through the document's own group version: one the server does not serve answers 404
        path = kind_of(kind).path(meta.get("namespace") or self._default_ns(kind), meta["name"],
                                  api_version=obj.get("apiVersion"))
        return request(self.client, "PATCH", path, query=query, body=obj, content_type="application/apply-patch+yaml")

    def apply(self, objects: list[dict], *, dry_run: bool = False,
              progress: Callable[[str, int, int], None] | None = None) -> list[dict]:
        """Server-side apply, all or none: every object is dry-run first, each write is journalled before it is
        sent (``drawb.cluster.journal``), and whatever stops the apply (a refusal, a lost or silent server, an
        interrupt) rolls back what it wrote (``drawb.cluster.kube.rollback``). The error then says what was
        rolled back (a DrawbError in its message, any other as a note), and what may remain when the server
        stayed away: the next command against this server, or cleanup, finishes the rollback.

        Per object: one GET (is it drawb's? does it exist?), one dry-run PATCH, and unless ``dry_run``
        one PATCH; ``progress(step, done, total)`` is told of each.
        """
        step = progress or (lambda what, done, total: None)
        journal = None if dry_run else Journal.start(self.server)
        labelled = [with_managed_label(o) for o in objects]
        if journal is not None:
            labelled = [with_run_label(o, journal.run) for o in labelled]
        try:
            applied = self._apply_all(labelled, dry_run, step, journal)
        except BaseException as exc:
            if journal is not None:
                self._roll_back(journal, exc, step)
            raise
        if journal is not None:
            journal.close()
        return applied

    def _apply_all(self, labelled: list[dict], dry_run: bool, step: Callable[[str, int, int], None],
                   journal: Journal | None) -> list[dict]:
        before = []
        for index, obj in enumerate(labelled):
            step("reading what exists", index + 1, len(labelled))
            with about_object(index):
                existing = self.get(obj["kind"], obj["metadata"]["name"], obj["metadata"].get("namespace"))
                if existing is not None and not is_managed(existing):
                    raise NotManagedByDrawb(
                        f"{obj['kind']} '{obj['metadata']['name']}' exists and was not created by drawb; "
                        "refusing to change it"
                    )
            before.append(existing)
        waits = _checked_when_applied(labelled, before)
        checked = []
        for index, (obj, wait) in enumerate(zip(labelled, waits)):
            step("dry run", index + 1, len(labelled))
            with about_object(index):
                checked.append(obj if wait else self._apply_one(obj, dry_run=True))
        if dry_run or journal is None:
            return DryRunObjects(checked, tuple(index for index, wait in enumerate(waits) if wait))
        applied = []
        for index, (obj, previous) in enumerate(zip(labelled, before)):
            step("applying", index + 1, len(labelled))
            journal.record(Write.of(obj, previous))
            with about_object(index):
                applied.append(self._apply_one(obj, dry_run=False))
        return applied

    def _roll_back(self, journal: Journal, exc: BaseException, step: Callable[[str, int, int], None]) -> None:
        """Undo what ``journal``'s apply wrote before ``exc`` stopped it, and say so on ``exc``."""
        answered = isinstance(exc, ClusterError) and exc.status is not None  # the server refused: it is up
        if not journal.writes and answered:
            journal.close()
            return  # refused before any write: the refusal says all
        outcome = roll_back(self.client, journal, wait_s=ROLLBACK_WAIT_S, last_unanswered=not answered,
                            progress=step)
        if isinstance(exc, DrawbError):
            exc.args = (f"{exc}\n{outcome.sentence()}",)
        else:
            exc.add_note(outcome.sentence())

    @property
    def server(self) -> str:
        """The API server's address, as the connection names it (apply journals are kept per server)."""
        return self.client.configuration.host

    def interrupted_applies(self) -> list[tuple[Journal, list[Write]]]:
        """The applies against this server whose process was killed or lost the server before rolling back, each
        with the writes still to undo (the objects that still carry its run's label)."""
        return [(journal, pending_writes(self.client, journal)) for journal in left_by_dead_runs(self.server)]

    def finish_interrupted_applies(self) -> list[Rollback]:
        """Roll back every interrupted apply against this server (see ``interrupted_applies``)."""
        return [roll_back(self.client, journal) for journal in left_by_dead_runs(self.server)]

    def delete(self, kind: str, name: str, namespace: str | None = None, *, force_unmanaged: bool = False) -> None:
        """Delete an object drawb created; refuse any other unless ``force_unmanaged``."""
        obj = self.get(kind, name, namespace)
        if obj is None:
            raise ClusterError(f"{kind} '{name}' not found", status=404, reason="NotFound")
        if not is_managed(obj) and not force_unmanaged:
            raise NotManagedByDrawb(f"{kind} '{name}' was not created by drawb; refusing to delete it")
        request(self.client, "DELETE", self._path(kind, namespace or self._default_ns(kind), name),
                query={"propagationPolicy": "Background"})

    def logs(self, pod: str, namespace: str, container: str | None = None, follow: bool = False) -> Iterator[str]:
        """A pod's log lines, streamed while ``follow``."""
        path = kind_of("Pod").path(namespace, pod, "log")
        query = {"container": container, "follow": "true" if follow else None}
        # a followed log may be quiet for as long as its container is
        raw = request(self.client, "GET", path, query=query, stream=True,
                      timeout=timeouts_of(self.client).pair(read_s=None) if follow else None)
        for line in stream_lines(raw):
            yield line.decode(errors="replace")

    def server_version(self) -> str:
        """The API server's ``gitVersion``."""
        return request(self.client, "GET", "/version")["gitVersion"]

    def served_resources(self) -> set[str]:
        """``<group/version>/<plural>`` for the group-versions drawb uses."""
        served = set()
        for group_version in sorted({k.api_version for k in KINDS.values()}):
            try:
                doc = request(self.client, "GET", group_version_path(group_version))
            except ClusterError as exc:
                if exc.status == 404:
                    continue
                raise
            served.update(f"{group_version}/{r['name']}" for r in doc.get("resources", []) if "/" not in r["name"])
        return served

    def group_versions(self, group: str) -> list[str]:
        """The versions of API ``group`` the server serves, from discovery (``/apis/<group>``)."""
        try:
            doc = request(self.client, "GET", f"/apis/{group}")
        except ClusterError as exc:
            if exc.status == 404:
                return []
            raise
        return [v["version"] for v in doc.get("versions") or []]

    def feature_gates_metric(self) -> dict[str, bool] | None:
        """The ``kubernetes_feature_enabled`` metric of ``/metrics``; None when not allowed or not served."""
        try:
            raw = request(self.client, "GET", "/metrics", stream=True)
        except ClusterError:
            return None
        try:
            text = raw.data.decode(errors="replace")
        finally:
            raw.release_conn()
        return {m.group(1): m.group(2) == "1" for m in _FEATURE_METRIC.finditer(text)}
