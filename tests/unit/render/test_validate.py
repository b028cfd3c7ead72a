"""Rendered manifests are checked against the schema and drawb's cross-reference rules."""

from __future__ import annotations

import copy

import pytest

from drawb.cluster.protocol import ClusterError
from drawb.render import ManifestInvalid, get_template, render, validate_documents

CLAIM_TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "two"},
    "spec": {"spec": {"devices": {
        "requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
            {"name": "alt", "firstAvailable": [
                {"name": "big", "deviceClassName": "gpu.nvidia.com"},
                {"name": "small", "deviceClassName": "mig.nvidia.com"},
            ]},
        ],
        "constraints": [{"requests": ["gpu", "alt/big"], "matchAttribute": "gpu.nvidia.com/productName"}],
        "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {
            "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
            "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}}}}}],
    }}},
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {
        "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two"}],
        "containers": [
            {"name": "a", "image": "busybox", "resources": {"claims": [{"name": "gpus", "request": "gpu"}]}},
            {"name": "b", "image": "busybox", "resources": {"claims": [{"name": "gpus", "request": "alt"}]}},
        ],
    },
}


class FakeCluster:
    """Just enough of the Cluster protocol: DeviceClasses, a version, and a record of applies."""

    def __init__(self, classes=("gpu.nvidia.com", "mig.nvidia.com"), version="v1.34.3", namespaces=None, served=("v1",)):
        self.served = served
        self.classes = [{"metadata": {"name": n}, "spec": {}} for n in classes]
        self.namespaces = namespaces or {}
        self.version = version
        self.applied: list[tuple[bool, list[dict]]] = []

    def list(self, kind, namespace=None):
        assert kind == "DeviceClass"
        return self.classes

    def get(self, kind, name, namespace=None):
        assert kind == "Namespace"
        labels = self.namespaces.get(name)
        return None if labels is None else {"metadata": {"name": name, "labels": labels}}

    def server_version(self):
        return self.version

    def group_versions(self, group):
        assert group == "resource.k8s.io"
        return list(self.served)

    def apply(self, objects, *, dry_run=False):
        self.applied.append((dry_run, copy.deepcopy(objects)))
        return objects


def errors(docs, compile_selector, **kwargs) -> list[str]:
    return [str(i) for i in validate_documents(docs, compile_selector=compile_selector, **kwargs) if i.level == "error"]


def test_a_consistent_set_has_no_errors(compile_selector):
    assert errors([CLAIM_TEMPLATE, POD], compile_selector, cluster=FakeCluster()) == []


def test_a_pod_claim_that_no_container_uses_is_a_warning(compile_selector):
    pod = copy.deepcopy(POD)
    pod["spec"]["resourceClaims"].append({"name": "spare", "resourceClaimTemplateName": "two"})
    assert errors([CLAIM_TEMPLATE, pod], compile_selector) == []  # the API server accepts it (corpus 61)
    [unused] = [i for i in validate_documents([CLAIM_TEMPLATE, pod], compile_selector=compile_selector)
                if "no container uses it" in i.message]
    assert unused.level == "warning" and "Pod/p" in str(unused) and "'spare'" in unused.message


def test_a_container_claim_the_pod_does_not_list_is_an_error(compile_selector):
    pod = copy.deepcopy(POD)
    pod["spec"]["containers"][1]["resources"]["claims"][0]["name"] = "gpu"
    msgs = errors([CLAIM_TEMPLATE, pod], compile_selector)
    assert any("container 'b' uses claim 'gpu'" in m and "listed: gpus" in m for m in msgs)


def test_a_container_request_the_claim_does_not_have_is_an_error(compile_selector):
    pod = copy.deepcopy(POD)
    pod["spec"]["containers"][0]["resources"]["claims"][0]["request"] = "gpu0"
    [msg] = errors([CLAIM_TEMPLATE, pod], compile_selector)
    assert "request 'gpu0'" in msg and "gpu, alt" in msg


@pytest.mark.parametrize(("section", "ref", "fragment"), [
    ("constraints", "gpus", "constraint names request 'gpus'"),
    ("constraints", "alt/huge", "subrequest 'alt/huge'"),
    ("config", "gpu1", "config names request 'gpu1'"),
])
def test_constraint_and_config_request_names_must_exist(section, ref, fragment, compile_selector):
    tpl = copy.deepcopy(CLAIM_TEMPLATE)
    tpl["spec"]["spec"]["devices"][section][0]["requests"] = [ref]
    [msg] = errors([tpl, POD], compile_selector)
    assert fragment in msg and f"spec.spec.devices.{section}[0].requests[0]" in msg


def test_beta_style_fields_directly_under_a_request_are_explained(compile_selector):
    tpl = copy.deepcopy(CLAIM_TEMPLATE)
    tpl["spec"]["spec"]["devices"]["requests"][0] = {"name": "gpu", "deviceClassName": "gpu.nvidia.com"}
    msgs = errors([tpl, POD], compile_selector)
    assert any("deviceClassName directly under the request" in m and "'exactly:'" in m for m in msgs)
    assert any("unknown field(s) 'deviceClassName'" in m for m in msgs), "the strict schema agrees"


def warnings(docs, compile_selector, **kwargs) -> list[str]:
    return [str(i) for i in validate_documents(docs, compile_selector=compile_selector, **kwargs) if i.level == "warning"]


def test_a_device_class_missing_from_the_connected_cluster_is_a_warning_with_a_guess(compile_selector):
    cluster = FakeCluster(classes=["gpu.nvidia.com", "mig.nvidia.co"])
    assert errors([CLAIM_TEMPLATE, POD], compile_selector, cluster=FakeCluster(classes=["gpu.nvidia.com"])) == []
    tpl = copy.deepcopy(CLAIM_TEMPLATE)  # the API server stores it (corpus 28); its pods wait for the class
    assert [w for w in warnings([tpl, POD], compile_selector, cluster=cluster) if "DeviceClass" in w] == [
        "ResourceClaimTemplate/two spec.spec.devices.requests[1].firstAvailable[1].deviceClassName: DeviceClass "
        "'mig.nvidia.com' is not installed in the connected cluster: the API server accepts the claim, and pods that "
        "use it stay Pending until the class exists; did you mean 'mig.nvidia.co'? installed: gpu.nvidia.com, "
        "mig.nvidia.co"]


def test_a_namespace_the_cluster_lacks_is_a_warning_naming_the_refusal_to_come(compile_selector):
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "c", "namespace": "nowhere"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
    assert warnings([claim], compile_selector, cluster=FakeCluster(namespaces={"default": {}})) == [
        "ResourceClaim/c metadata.namespace: namespace 'nowhere' does not exist in the connected cluster: the API "
        "server refuses the object (namespaces \"nowhere\" not found) until it does; create it first (a Namespace "
        "named 'nowhere' among these manifests, before the objects in it), or use an existing namespace"]
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nowhere"}}
    assert warnings([namespace, claim], compile_selector, cluster=FakeCluster()) == []
    assert warnings([claim], compile_selector, cluster=FakeCluster(namespaces={"nowhere": {}})) == []
    assert warnings([claim], compile_selector) == []  # without a cluster nothing is known

    class Forbidden(FakeCluster):
        reads = 0

        def get(self, kind, name, namespace=None):
            Forbidden.reads += 1
            raise ClusterError('namespaces "nowhere" is forbidden', status=403, reason="Forbidden")

    admin = copy.deepcopy(claim)
    admin["metadata"]["name"] = "admin"
    admin["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    issues = validate_documents([claim, admin], compile_selector=compile_selector, cluster=Forbidden())
    assert [str(i) for i in issues] == [] and Forbidden.reads == 1  # RBAC hides it: nothing known, asked once


def test_a_device_class_rendered_alongside_counts_as_existing(compile_selector):
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "mig.nvidia.com"},
           "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}
    assert errors([cls, CLAIM_TEMPLATE, POD], compile_selector, cluster=FakeCluster(classes=["gpu.nvidia.com"])) == []


@pytest.mark.parametrize(("mutate", "fragment"), [
    (lambda d: d["requests"][0]["exactly"].update(count="2"), "'2' is not of type 'integer'"),
    (lambda d: d["requests"][0]["exactly"].update(colour="green"), "unknown field(s) 'colour'"),
    (lambda d: d["requests"][0]["exactly"].update(allocationMode="All", count=2), "leave count out"),
    (lambda d: d["requests"][0]["exactly"].update(selectors=[{"cel": {"expression": "device.driver = 'x'"}}]),
     "selector does not compile"),
    (lambda d: d["requests"][0]["exactly"].update(capacity={"requests": {"memory": "40GB"}}),
     "'40GB' is not a Kubernetes quantity"),
    (lambda d: d["requests"].append({"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}),
     "request name 'gpu' is used twice"),
    (lambda d: d["constraints"][0].update(matchAttribute="productName"), "must be fully qualified"),
    (lambda d: d["config"][0]["opaque"]["parameters"]["sharing"]["timeSlicingConfig"].update(interval="Forever"),
     "interval must be one of Default, Short, Medium, Long"),
    (lambda d: d["config"][0]["opaque"]["parameters"]["sharing"].update(strategy="MPS"),
     "timeSlicingConfig is set but the strategy is MPS"),
    (lambda d: d["config"][0]["opaque"]["parameters"].update(kind="GPUConfig"), "unknown NVIDIA config kind"),
    (lambda d: d["config"][0]["opaque"]["parameters"]["sharing"].update(mpsConfig={"threads": 5}),
     "mpsConfig has unknown field(s) threads"),
])
def test_broken_claims_are_named(mutate, fragment, compile_selector):
    tpl = copy.deepcopy(CLAIM_TEMPLATE)
    mutate(tpl["spec"]["spec"]["devices"])
    msgs = errors([tpl, POD], compile_selector)
    assert any(fragment in m for m in msgs), msgs


def test_a_claim_no_container_uses_is_a_warning(tmp_path, compile_selector):
    # A user template whose pod lists a claim no container uses: the API server accepts the pod and the
    # scheduler allocates the claim (a pod-level device such as a NIC is used so), so it renders, with a warning.
    text = get_template("single-gpu").text.replace("      claims:\n      - name: gpu\n", "      claims: []\n")
    (tmp_path / "orphan.yaml.j2").write_text(text)
    rendered = render("orphan", template_dirs=[tmp_path], compile_selector=compile_selector)
    [warning] = [str(w) for w in rendered.warnings if "no container uses it" in str(w)]
    assert "lists claim 'gpu' in resourceClaims" in warning and "still allocates its devices" in warning


def test_version_dependent_fields_warn_on_older_versions(compile_selector):
    on_134 = render("multi-gpu-one-node", compile_selector=compile_selector, kubernetes_version="1.34")
    on_136 = render("multi-gpu-one-node", compile_selector=compile_selector, kubernetes_version="1.36")
    assert any("DRAConsumableCapacity" in str(w) for w in on_134.warnings)
    assert not on_136.warnings


def test_render_against_a_cluster_uses_its_version_and_classes(compile_selector):
    cluster = FakeCluster(classes=["gpu.nvidia.com"], version="v1.36.1")
    assert render("single-gpu", cluster=cluster, compile_selector=compile_selector).kubernetes_version == "v1.36.1"
    mig = render("mig-profile", cluster=cluster, compile_selector=compile_selector)
    assert any("DeviceClass 'mig.nvidia.com' is not installed" in str(w) for w in mig.warnings)


def test_apply_is_a_dry_run_unless_asked_and_always_dry_runs_first(compile_selector):
    r = render("single-gpu", namespace="ns", compile_selector=compile_selector)
    cluster = FakeCluster()
    r.apply(cluster)
    assert [dry for dry, _ in cluster.applied] == [True]
    assert "accepted by the API server, dry run: 2 object(s)" in r._repr_markdown_()
    r.apply(cluster, dry_run=False)
    assert [dry for dry, _ in cluster.applied] == [True, False]  # the cluster dry-runs first (contract suite)
    assert "(applied: 2 object(s), accepted by the API server)" in r._repr_html_()
    assert cluster.applied[-1][1] == r.documents


def test_apply_to_a_cluster_without_the_class_goes_ahead_as_the_api_server_does(compile_selector):
    r = render("mig-profile", compile_selector=compile_selector)
    cluster = FakeCluster(classes=["gpu.nvidia.com"])
    r.apply(cluster, dry_run=False)
    assert [dry for dry, _ in cluster.applied] == [False]


def test_a_node_field_selector_takes_one_value(compile_selector):
    pod = copy.deepcopy(POD)
    pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]}}}
    [msg] = errors([CLAIM_TEMPLATE, pod], compile_selector)
    assert "takes exactly one value" in msg and "matchFields[0].values" in msg


def test_admin_access_needs_the_namespace_label_in_the_connected_cluster(compile_selector):
    label = {"resource.kubernetes.io/admin-access": "true"}
    unlabelled = FakeCluster(namespaces={"ops": {}})
    with pytest.raises(ManifestInvalid, match="admin-access: true` label on the containing namespace; namespace 'ops' lacks it"):
        render("admin-access", namespace="ops", cluster=unlabelled, compile_selector=compile_selector)
    labelled = FakeCluster(namespaces={"ops": label})
    render("admin-access", namespace="ops", cluster=labelled, compile_selector=compile_selector)
    unknown = FakeCluster()  # a namespace the cluster does not know yet: nothing to check against
    render("admin-access", namespace="ops", cluster=unknown, compile_selector=compile_selector)


def test_the_target_version_decides_which_apis_exist(compile_selector):
    with pytest.raises(ManifestInvalid) as exc:
        render("single-gpu", kubernetes_version="1.33", compile_selector=lambda e, v: None)
    assert "resource.k8s.io/v1 ResourceClaimTemplate is not in the API of Kubernetes 1.33; it is served from 1.34 on" \
        in str(exc.value)
    doc = {"apiVersion": "resource.k8s.io/v2", "kind": "ResourceClaim", "metadata": {"name": "x"}}
    [msg] = errors([doc], compile_selector)
    assert msg == ("ResourceClaim/x apiVersion: resource.k8s.io/v2 is not served by a Kubernetes 1.34 API server with "
                   "default settings: use v1")


def test_the_distinct_attribute_warning_says_what_134_does(compile_selector):
    on_134 = render("multi-gpu-one-node", compile_selector=compile_selector, kubernetes_version="1.34")
    on_135 = render("multi-gpu-one-node", compile_selector=compile_selector, kubernetes_version="1.35")
    [w134] = [str(w) for w in on_134.warnings if "distinctAttribute" in str(w)]
    assert "keeps distinctAttribute" in w134 and "different devices always pass" in w134
    assert "DRAResourceClaimDeviceStatus off" in w134
    assert any("needs feature gate DRAConsumableCapacity" in str(w) for w in on_135.warnings)


def test_count_zero_is_a_warning_and_a_negative_count_an_error_the_server_refuses(compile_selector):
    zero, negative = copy.deepcopy(CLAIM_TEMPLATE), copy.deepcopy(CLAIM_TEMPLATE)
    zero["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 0
    negative["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = -1
    [warning] = [i for i in validate_documents([zero, POD], compile_selector=compile_selector) if "count" in i.path]
    assert warning.level == "warning" and "stores count 1" in warning.message
    [error] = [i for i in validate_documents([negative, POD], compile_selector=compile_selector) if "count" in i.path]
    assert error.level == "error" and error.refused_by_server


def _slice(devices: list[dict], **spec) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": "n", "pool": {"name": "p", "generation": 1,
                                                                           "resourceSliceCount": 1},
                     "devices": devices, **spec}}


@pytest.mark.parametrize(("doc", "fragment"), [
    (_slice([{"name": f"gpu-{i}"} for i in range(129)]), "129 devices: resource.k8s.io/v1 allows at most 128"),
    (_slice([{"name": "gpu-0", "attributes": {f"a{i}": {"int": i} for i in range(33)}}]),
     "33 attributes and capacities: resource.k8s.io allows at most 32 per device"),
    (_slice([{"name": "gpu-0"}, {"name": "gpu-0"}]), "device name 'gpu-0' is used twice"),
    (_slice([{"name": "gpu-0"}], allNodes=True), "exactly one of nodeName, nodeSelector, allNodes"),
    (_slice([{"name": "gpu-0", "bindingConditions": ["ready"]}]), "bindingFailureConditions are required"),
    (_slice([{"name": "GPU_0"}]), "'GPU_0' is not a DNS label"),
])
def test_slice_limits_the_api_server_enforces(doc, fragment, compile_selector):
    issues = [i for i in validate_documents([doc], compile_selector=compile_selector) if i.level == "error"]
    assert any(fragment in i.message and i.refused_by_server for i in issues), issues


def test_drawbs_own_advice_is_not_marked_as_a_server_refusal(compile_selector):
    # The API server stores opaque parameters as given; the NVIDIA driver refuses this kind when it prepares
    # the claim, so drawb calls it an error, but not one the API server makes.
    tpl = copy.deepcopy(CLAIM_TEMPLATE)
    tpl["spec"]["spec"]["devices"]["config"][0]["opaque"]["parameters"]["kind"] = "GPUConfig"
    [wrong] = [i for i in validate_documents([tpl], compile_selector=compile_selector) if "config kind" in i.message]
    assert wrong.level == "error" and not wrong.refused_by_server


def test_a_slice_of_128_devices_is_fine(compile_selector):
    assert errors([_slice([{"name": f"gpu-{i}"} for i in range(128)])], compile_selector) == []


def test_a_document_without_api_version_is_refused_as_the_server_refuses_it():
    from drawb.cluster.sim.cluster import SimCluster

    pod = {k: v for k, v in copy.deepcopy(POD).items() if k != "apiVersion"}
    [issue, *_] = validate_documents([pod])
    assert (issue.level, issue.path, issue.refused_by_server) == ("error", "apiVersion", True)
    assert issue.message == "apiVersion is not set, so the API server cannot decode the document (400 BadRequest): a Pod is v1"
    with pytest.raises(ClusterError) as refused:  # the real server: 400 "invalid object type"
        SimCluster(workloads=False).apply([pod], dry_run=True)
    assert refused.value.status == 400


def test_documents_that_differ_only_in_name_get_the_same_schema_findings():
    bad = copy.deepcopy(CLAIM_TEMPLATE)
    bad["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = "two"
    first, second = copy.deepcopy(bad), copy.deepcopy(bad)
    second["metadata"]["name"] = "other"
    found = [[(i.document, i.path, i.message) for i in validate_documents([d]) if i.level == "error"] for d in (first, second)]
    assert found[0] == [("ResourceClaimTemplate/two", "spec.spec.devices.requests[0].exactly.count",
                         "'two' is not of type 'integer', 'null'")]
    assert found[1] == [("ResourceClaimTemplate/other", *found[0][0][1:])]
    nameless = copy.deepcopy(first)
    nameless["metadata"]["name"] = 7  # a name that is not a string is part of what the schema judges
    assert ("metadata.name", "7 is not of type 'string', 'null'") in [(i.path, i.message) for i in validate_documents([nameless])]


def test_a_dry_run_that_left_objects_unchecked_says_how_many():
    from drawb.cluster.protocol import DryRunObjects
    from drawb.render.rendered import unchecked_note

    assert unchecked_note([{"kind": "Pod"}]) == unchecked_note(DryRunObjects([{"kind": "Pod"}])) == ""
    note = unchecked_note(DryRunObjects([{"kind": "ServiceAccount"}, {"kind": "Pod"}], (1,)))
    assert note.startswith("; 1 of them not checked yet (in a Namespace, or running as a ServiceAccount")
