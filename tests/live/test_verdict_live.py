"""drawb's verdict against the real API server's, document by document: a DeviceClass that is not installed
(the server stores the claim), a namespace that does not exist (404), resource.k8s.io/v1beta1 and v1beta2 at
the 1.34 defaults (404: the server does not serve them), and v1beta1 on a server started with
``--runtime-config=resource.k8s.io/v1beta1=true`` (judged by v1beta1's own schema).

Each document goes to the real server as a server-side-apply dry run through its own group version (the
path built here, not by drawb), to drawb's ``validate`` connected to that server, to drawb's ``apply
--dry-run`` through it, and (at the defaults) to the simulated cluster of the same version: validate
refuses exactly what the server refuses, and both applies get the server's answer with its HTTP status."""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass

import pytest
import yaml

from drawb.cluster.kube import KubeCluster
from drawb.cluster.protocol import KINDS, ClusterError
from drawb.render import validate_documents
from tests.conftest import DATA
from tests.live.corpus_run import simulated_twin

pytestmark = pytest.mark.live

V1BETA1 = "resource.k8s.io/v1beta1=true"


def claim(api_version: str = "resource.k8s.io/v1", device_class: str = "gpu.nvidia.com", nested: bool = True,
          namespace: str = "{ns}") -> dict:
    request = {"deviceClassName": device_class, "count": 1}
    return {"apiVersion": api_version, "kind": "ResourceClaim",
            "metadata": {"name": f"verdict-{uuid.uuid4().hex[:6]}", "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": request} if nested
                                              else {"name": "gpu", **request}]}}}


def device_class(api_version: str) -> dict:
    return {"apiVersion": api_version, "kind": "DeviceClass", "metadata": {"name": f"verdict-{uuid.uuid4().hex[:6]}"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}


def legacy_slice(extra_attributes: int = 0) -> dict:
    """The NVIDIA driver's v25.3 slice (resource.k8s.io/v1beta1, devices under ``basic:``), renamed."""
    text = (DATA / "fixtures" / "resourceslices-legacy-v25.3-v1beta1.yaml").read_text()
    doc = copy.deepcopy(yaml.safe_load(text)["items"][0])
    doc["metadata"] = {"name": f"verdict-{uuid.uuid4().hex[:6]}"}
    doc["spec"]["pool"]["name"] = doc["metadata"]["name"]
    doc["spec"]["devices"][0]["basic"]["attributes"].update({f"extra{i}": {"int": i} for i in range(extra_attributes)})
    return doc


@dataclass
class Case:
    """One document, the server's answer (``accept`` or the HTTP status of its refusal) and what validate says."""

    name: str
    document: dict
    server: str | int
    finding: str  # a fragment of validate's finding (an error exactly when the server refuses)
    level: str = "error"


DEFAULTS = [
    Case("class-not-installed", claim(device_class="gpu.nvidia.cmo"), "accept",
         "DeviceClass 'gpu.nvidia.cmo' is not installed in the connected cluster: the API server accepts the claim, "
         "and pods that use it stay Pending until the class exists; did you mean 'gpu.nvidia.com'?", "warning"),
    Case("namespace-missing", claim(namespace="verdict-nowhere"), 404,
         "namespace 'verdict-nowhere' does not exist in the connected cluster: the API server refuses the object "
         "(namespaces \"verdict-nowhere\" not found) until it does", "warning"),
    Case("v1beta1-claim", claim("resource.k8s.io/v1beta1", nested=False), 404,
         "resource.k8s.io/v1beta1 is not served by the connected cluster (it serves resource.k8s.io v1): "
         "use v1, `{prog} convert FILE` rewrites it"),
    Case("v1beta2-class", device_class("resource.k8s.io/v1beta2"), 404,
         "resource.k8s.io/v1beta2 is not served by the connected cluster (it serves resource.k8s.io v1)"),
    Case("v1-claim", claim(), "accept", ""),
]
BETA1_SERVED = [
    Case("v1beta1-claim", claim("resource.k8s.io/v1beta1", nested=False), "accept", ""),
    Case("v1beta1-class", device_class("resource.k8s.io/v1beta1"), "accept", ""),
    Case("v1beta1-slice", legacy_slice(), "accept", ""),
    Case("v1beta1-slice-too-many-attributes", legacy_slice(32), 422,
         "attributes and capacities: resource.k8s.io allows at most 32 per device"),
    # server-side apply answers a field its schema lacks with 500 ("failed to create typed patch object")
    Case("v1beta1-claim-nested-as-v1", claim("resource.k8s.io/v1beta1"), 500, "unknown field(s) 'exactly'"),
    Case("v1beta2-class", device_class("resource.k8s.io/v1beta2"), 404,
         "resource.k8s.io/v1beta2 is not served by the connected cluster (it serves resource.k8s.io v1, v1beta1)"),
]


def placed(doc: dict, namespace: str) -> dict:
    doc = copy.deepcopy(doc)
    meta = doc["metadata"]
    if meta.get("namespace") == "{ns}":
        meta["namespace"] = namespace
    return doc


def server_answer(api, doc: dict) -> str | int:
    """The server's own answer to a server-side-apply dry run through the document's group version."""
    kind, meta = KINDS[doc["kind"]], doc["metadata"]
    where = f"/namespaces/{meta['namespace']}" if kind.namespaced else ""
    path = f"/apis/{doc['apiVersion']}{where}/{kind.plural}/{meta['name']}"
    try:
        api.request("PATCH", path, doc, {"fieldManager": "verdict-test", "dryRun": "All", "force": "true"},
                    content_type="application/apply-patch+yaml")
    except ClusterError as exc:
        return exc.status
    return "accept"


def apply_answer(cluster, doc: dict) -> str | int:
    try:
        cluster.apply([copy.deepcopy(doc)], dry_run=True)
    except ClusterError as exc:
        return exc.status
    return "accept"


def check(case: Case, cp, namespace: str, sim=None) -> None:
    doc = placed(case.document, namespace)
    real = server_answer(cp.api(), doc)
    assert real == case.server, f"{case.name}: the server answered {real}"
    kube = KubeCluster(kubeconfig=str(cp.kubeconfig))
    try:
        issues = validate_documents([copy.deepcopy(doc)], kubernetes_version=kube.server_version(), cluster=kube)
        errors = [str(i) for i in issues if i.level == "error"]
        if case.level == "warning":  # the server's answer is apply's; validate warns of it
            assert errors == [], (case.name, errors)
        else:
            assert bool(errors) == (real != "accept"), (case.name, errors)
        if case.finding:
            assert [i for i in issues if i.level == case.level and case.finding in i.message], (case.name, issues)
        assert apply_answer(kube, doc) == real, case.name
    finally:
        kube.close()
    if sim is not None:
        assert apply_answer(sim, doc) == real, f"{case.name}: the simulated cluster disagrees"


@pytest.mark.parametrize("case", DEFAULTS, ids=[c.name for c in DEFAULTS])
def test_drawb_gives_the_default_servers_verdict(control_plane, namespace, case):
    sim = simulated_twin(control_plane)
    sim.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    check(case, control_plane, namespace, sim)


@pytest.fixture(scope="module")
def beta1_served(start_control_plane):
    """A control plane serving resource.k8s.io/v1beta1 beside v1 (off by default in 1.34)."""
    cp = start_control_plane({}, runtime_config=V1BETA1)
    yield cp
    cp.cluster.down()


@pytest.mark.parametrize("case", BETA1_SERVED, ids=[c.name for c in BETA1_SERVED])
def test_drawb_gives_the_verdict_of_a_server_that_serves_v1beta1(beta1_served, case):
    check(case, beta1_served, beta1_served.create_namespace("verdict"))
