"""``convert`` against the real API server's own conversion: each v1beta1 and v1beta2 document is created
through its group version on a control plane that serves them, read back as v1, and drawb's converted
document must say the same (every field drawb wrote has the server's value, and the server makes the very
same v1 object of it); a v1beta1 claim only renamed to v1 is refused, so the comparison can fail."""

from __future__ import annotations

import pytest
import yaml

from drawb.cluster.protocol import ClusterError, KINDS
from drawb.convert import convert_text
from tests.conftest import DATA

pytestmark = pytest.mark.live

FILES = [DATA / "convert" / "v1beta1-claims.yaml", DATA / "convert" / "v1beta2-claims.yaml"]
SERVED = "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true,resource.k8s.io/v1alpha3=true"
GATES = {"DRADeviceTaints": True}  # the v1beta1 tolerations and taints are kept, not dropped


@pytest.fixture(scope="module")
def betas_served(start_control_plane):
    """A control plane serving resource.k8s.io v1beta1 and v1beta2 beside v1 (off by default in 1.34)."""
    cp = start_control_plane(GATES, runtime_config=SERVED)
    yield cp
    cp.cluster.down()


def _path(obj: dict, namespace: str, version: str | None = None) -> str:
    kind = KINDS[obj["kind"]]
    prefix = f"/apis/{obj['apiVersion'].split('/')[0]}/{version}" if version else kind.path_prefix
    where = f"/namespaces/{namespace}" if kind.namespaced else ""
    return f"{prefix}{where}/{kind.plural}"


def _placed(obj: dict, namespace: str, suffix: str = "") -> dict:
    meta = {**obj["metadata"], "name": obj["metadata"]["name"] + suffix}
    if KINDS[obj["kind"]].namespaced:
        meta["namespace"] = namespace
    return {**obj, "metadata": meta}


def _within(written: object, served: object, where: str = "spec") -> None:
    """Every value drawb wrote is the server's at the same place."""
    if isinstance(written, dict):
        assert isinstance(served, dict), where
        for key, value in written.items():
            assert key in served, f"{where}.{key} is not in the server's v1 object"
            _within(value, served[key], f"{where}.{key}")
    elif isinstance(written, list):
        assert isinstance(served, list) and len(written) == len(served), where
        for i, (a, b) in enumerate(zip(written, served)):
            _within(a, b, f"{where}[{i}]")
    else:
        assert written == served, f"{where}: drawb wrote {written!r}, the server holds {served!r}"


@pytest.mark.parametrize("source", FILES, ids=[f.stem for f in FILES])
def test_converted_documents_equal_the_api_servers_conversion(betas_served, source):
    api = betas_served.api()
    namespace = betas_served.create_namespace("convert")
    old = list(yaml.safe_load_all(source.read_text()))
    new = list(yaml.safe_load_all(convert_text(source.read_text(), source.name)[0]))
    assert len(old) == len(new) == 4
    for original, converted in zip(old, new):
        version = original["apiVersion"].split("/")[1]
        created = api.request("POST", _path(original, namespace, version), _placed(original, namespace))
        as_v1 = api.get(f"{_path(original, namespace)}/{created['metadata']['name']}")
        assert as_v1["apiVersion"] == "resource.k8s.io/v1" and converted["apiVersion"] == "resource.k8s.io/v1"
        _within(converted["spec"], as_v1["spec"])
        again = api.request("POST", _path(converted, namespace), _placed(converted, namespace, "-v1"),
                            query={"dryRun": "All", "fieldValidation": "Strict"})
        assert again["spec"] == as_v1["spec"], original["metadata"]["name"]


def test_a_v1beta1_claim_only_renamed_to_v1_is_refused(betas_served):
    namespace = betas_served.create_namespace("convert")
    claim = next(d for d in yaml.safe_load_all(FILES[0].read_text()) if d["kind"] == "ResourceClaim")
    renamed = _placed({**claim, "apiVersion": "resource.k8s.io/v1"}, namespace)
    with pytest.raises(ClusterError) as refused:
        betas_served.api().request("POST", _path(renamed, namespace), renamed,
                                   query={"dryRun": "All", "fieldValidation": "Strict"})
    assert 'unknown field "spec.devices.requests[0].deviceClassName"' in str(refused.value)
