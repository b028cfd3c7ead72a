"""The agreement test: every document of the public corpus (manifests others published: NVIDIA's DRA driver
demos and tests, the dra-example-driver demos, the Kubernetes docs' DRA examples, device-plugin-era GPU
workloads, and beta- and alpha-era manifests from their history; tests/data/public-corpus/SOURCES.md) gets
drawb's answer and the real API server's, and they must be the same accept or refuse.

The real answer is the API server's own: a server-side-apply dry run of the document through its own group
version (the resource found by the server's discovery; a group version it does not serve is its 404). drawb
answers three times: ``validate`` of the document's file connected to the simulated cluster of the server's
version and gates (what a user runs first), ``validate`` connected to the real server, and the simulated
cluster's ``apply --dry-run`` of the document. A validate error on a document is a refusal; a warning is not.

The version is the live tier's (``DRAWB_K8S_VERSION``, default 1.34). The namespaces the files use exist on
both clusters first (a file's own Namespace document is judged like any other document)."""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass

import pytest

from drawb.apirules import label
from drawb.cluster.kube import KubeCluster
from drawb.cluster.protocol import ClusterError
from drawb.commands.registry import run_line
from drawb.session import Session
from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for
from tests.contract.public_corpus import PUBLIC_CORPUS, Document, load_documents, namespaces_named
from tests.live.corpus_run import simulated_twin

pytestmark = [pytest.mark.live, pytest.mark.every_version]

DOCUMENTS = load_documents()


@dataclass
class Answers:
    """Each party's verdict on one document: ``accept``, or the refusal (HTTP status or drawb's message)."""

    server: str
    validate_sim: str
    validate_real: str
    sim_dry_run: str


class Discovery:
    """The server's resources per group version, read once each."""

    def __init__(self, api):
        self.api, self.seen = api, {}

    def path(self, doc: dict) -> str | int:
        """The document's REST path in its own group version, or 404 where the server has no such resource."""
        group_version = doc.get("apiVersion") or "v1"
        if group_version not in self.seen:
            base = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
            found = self.api.get_or_none(base)
            self.seen[group_version] = None if found is None else (base, {
                r["kind"]: r for r in found.get("resources", []) if "/" not in r["name"]})
        served = self.seen[group_version]
        resource = served and served[1].get(doc.get("kind"))
        if resource is None:
            return 404
        meta = doc.get("metadata") or {}
        where = f"/namespaces/{meta.get('namespace') or 'default'}" if resource["namespaced"] else ""
        return f"{served[0]}{where}/{resource['name']}/{meta.get('name')}"


def server_answer(api, discovery: Discovery, doc: dict) -> str:
    """The API server's answer to a server-side-apply dry run of ``doc``."""
    path = discovery.path(doc)
    if path == 404:
        return "HTTP 404"
    try:
        api.request("PATCH", path, doc, {"fieldManager": "public-corpus", "dryRun": "All", "force": "true"},
                    content_type="application/apply-patch+yaml")
    except ClusterError as exc:
        return f"HTTP {exc.status}: {exc}"
    return "accept"


def validate_answers(session: Session, documents: list[Document]) -> dict[str, str]:
    """``validate`` of each file, connected to the session's cluster: per document, its first error or accept."""
    by_file = defaultdict(list)
    for doc in documents:
        by_file[doc.file].append(doc)
    answers = {}
    for file, docs in by_file.items():
        report = run_line(session, f"validate {PUBLIC_CORPUS / file}", prog="drawb")
        errors = defaultdict(list)
        for finding in report.errors:
            errors[finding.issue.document].append(str(finding))
        for doc in docs:
            answers[doc.id] = "; ".join(errors[label(doc.body)]) or "accept"
    return answers


def dry_run_answer(cluster, doc: dict) -> str:
    try:
        cluster.apply([copy.deepcopy(doc)], dry_run=True)
    except ClusterError as exc:
        return f"refused ({exc.status}): {exc}"
    return "accept"


def ensure_namespaces(control_plane, sim) -> list[str]:
    """Every namespace the corpus uses, on both clusters; the real ones this created."""
    api, created = control_plane.api(), []
    for name in namespaces_named(DOCUMENTS):
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        if api.get_or_none(path_for("Namespace", name)) is None:
            api.create(namespace)
            created.append(name)
        if sim.get("Namespace", name) is None:
            sim.apply([namespace])
    for name in created:  # the ServiceAccount admission plugin needs it before a pod is accepted
        wait_for(lambda: api.get_or_none(path_for("ServiceAccount", "default", name)), timeout=120,
                 what=f"default ServiceAccount in {name}")
    return created


@pytest.fixture(scope="module")
def answers(control_plane) -> dict[str, Answers]:
    sim, api = simulated_twin(control_plane), control_plane.api()
    created = ensure_namespaces(control_plane, sim)
    kube = KubeCluster(kubeconfig=str(control_plane.kubeconfig))
    real_session, sim_session = Session(_cluster=kube, progress_bar="never"), Session(_cluster=sim, progress_bar="never")
    try:
        discovery = Discovery(api)
        on_sim, on_real = validate_answers(sim_session, DOCUMENTS), validate_answers(real_session, DOCUMENTS)
        return {d.id: Answers(server_answer(api, discovery, d.body), on_sim[d.id], on_real[d.id],
                              dry_run_answer(sim, d.body)) for d in DOCUMENTS}
    finally:
        real_session.close()
        for name in created:
            api.delete(path_for("Namespace", name))


def accepted(answer: str) -> bool:
    return answer == "accept"


def test_the_corpus_is_large_and_varied():
    assert len(DOCUMENTS) >= 60
    versions = {d.body.get("apiVersion") for d in DOCUMENTS if d.body.get("kind") in ("ResourceClaim", "ResourceClaimTemplate")}
    assert {"resource.k8s.io/v1", "resource.k8s.io/v1beta1", "resource.k8s.io/v1alpha3", "resource.k8s.io/v1alpha2"} <= versions
    gpu_limits = [d for d in DOCUMENTS if "nvidia.com/gpu" in str(d.body) and d.body.get("kind") in ("Pod", "Job", "Deployment")]
    assert len(gpu_limits) >= 3


def test_the_server_both_accepts_and_refuses(answers):
    verdicts = [accepted(a.server) for a in answers.values()]
    assert verdicts.count(True) >= 30 and verdicts.count(False) >= 10


@pytest.mark.parametrize("doc", DOCUMENTS, ids=[d.id for d in DOCUMENTS])
def test_drawb_gives_the_servers_verdict(answers, doc):
    answer = answers[doc.id]
    wrong = {who: said for who, said in vars(answer).items() if who != "server"
             and accepted(said) != accepted(answer.server)}
    assert wrong == {}, f"{label(doc.body)}: the API server said {answer.server}; drawb: {wrong}"
