"""``convert_text``: v1beta1/v1beta2 DRA documents rewritten to v1 as the API server converts them, and every
character it does not change kept (comments, quoting, flow style, line breaks)."""

from __future__ import annotations

import difflib
import io

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from drawb.convert import ConvertInputNotYaml, convert_text
from drawb.convert.facts import EXACT_FIELDS
from tests.conftest import DATA

V1BETA1 = DATA / "convert" / "v1beta1-claims.yaml"
V1BETA2 = DATA / "convert" / "v1beta2-claims.yaml"


def _content(line: str) -> str:
    """A line without its indentation and sequence dash."""
    return line.strip().removeprefix("- ").strip()


def test_v1beta1_documents_become_what_v1_holds():
    new_text, changes = convert_text(V1BETA1.read_text(), "v1beta1-claims.yaml")
    template, claim, device_class, resource_slice = yaml.safe_load_all(new_text)
    assert {d["apiVersion"] for d in (template, claim, device_class, resource_slice)} == {"resource.k8s.io/v1"}
    assert template["spec"]["spec"]["devices"]["requests"] == [{"name": "gpus", "exactly": {
        "deviceClassName": "gpu.nvidia.com",
        "selectors": [{"cel": {"expression": 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'}}],
        "allocationMode": "ExactCount", "count": 2}}]
    requests = claim["spec"]["devices"]["requests"]
    assert requests[0] == {"exactly": {"deviceClassName": "mig.nvidia.com", "allocationMode": "All"}, "name": "migs"}
    assert requests[1] == {"name": "flow", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}
    assert "exactly" not in requests[2] and requests[2]["firstAvailable"][1] == {"name": "any",
                                                                                "deviceClassName": "gpu.nvidia.com"}
    assert requests[3]["exactly"]["tolerations"][0]["key"] == "example.com/unhealthy"
    devices = resource_slice["spec"]["devices"]
    assert devices[0] == {"name": "gpu-0", "attributes": {"productName": {"string": "NVIDIA H100 80GB HBM3"},
                                                          "cudaComputeCapability": {"version": "9.0.0"},
                                                          "index": {"int": 0}},
                          "capacity": {"memory": {"value": "80Gi"}}}
    assert devices[1]["name"] == "gpu-1" and devices[1]["taints"][0]["value"] == "ecc" and "basic" not in devices[1]
    assert devices[2] == {"name": "gpu-2", "attributes": {"index": {"int": 2}}, "capacity": {"memory": {"value": "80Gi"}}}
    assert [c.label for c in changes] == ["ResourceClaimTemplate/two-big-gpus", "ResourceClaim/every-mig",
                                          "DeviceClass/convert-test-big-gpu", "ResourceSlice/convert-test-node-1-gpu"]
    assert "request 'migs': deviceClassName, allocationMode under exactly:" in changes[1].changes
    assert "device 'gpu-1': basic: unwrapped" in changes[3].changes


def test_every_line_it_keeps_is_kept_byte_for_byte():
    old = V1BETA1.read_text().splitlines()
    new = convert_text(V1BETA1.read_text())[0].splitlines()
    matcher = difflib.SequenceMatcher(None, [_content(x) for x in old], [_content(x) for x in new], autojunk=False)
    kept = moved = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":  # the same text: the same bytes, or moved with its indentation (and dash) only
            kept += sum(a == b for a, b in zip(old[i1:i2], new[j1:j2]))
            moved += sum(a != b for a, b in zip(old[i1:i2], new[j1:j2]))
            continue
        assert all(_content(x).startswith(("apiVersion:", "basic:", "{name: flow")) for x in old[i1:i2]), old[i1:i2]
        assert all(_content(x) in ("exactly:", "apiVersion: resource.k8s.io/v1", "# the basic device first",
                                   "attributes: {index: {int: 2}}", "capacity: {memory: {value: 80Gi}}",
                                   "{name: flow, exactly: {deviceClassName: gpu.nvidia.com, count: 1}}")
                   for x in new[j1:j2]), new[j1:j2]
    # what differs: apiVersion lines, exactly: lines, the flow request, basic's comment and flow split
    assert kept + moved == len(new) - 4 - 3 - 1 - 3
    assert moved == 8 + 2 + 4 + 8 + 7 and kept > 2 * moved  # the lines of the moved keys and unwrapped devices


def test_v1beta2_changes_only_the_api_version_and_keeps_its_quotes():
    old = V1BETA2.read_text()
    new, changes = convert_text(old)
    assert new == old.replace('apiVersion: "resource.k8s.io/v1beta2"', 'apiVersion: "resource.k8s.io/v1"').replace(
        "apiVersion: resource.k8s.io/v1beta2", "apiVersion: resource.k8s.io/v1")
    assert new.startswith("# resource.k8s.io/v1beta2 (Kubernetes 1.33)")
    assert len(changes) == 4 and all(c.changes == ["apiVersion resource.k8s.io/v1beta2 -> resource.k8s.io/v1"]
                                     for c in changes)


def test_line_breaks_and_a_missing_last_one_are_kept():
    old = ("apiVersion: resource.k8s.io/v1beta1\r\nkind: ResourceClaim\r\nmetadata: {name: c}\r\nspec:\r\n"
           "  devices:\r\n    requests:\r\n    - name: gpu\r\n      deviceClassName: gpu.nvidia.com")
    new, _ = convert_text(old)
    assert new == ("apiVersion: resource.k8s.io/v1\r\nkind: ResourceClaim\r\nmetadata: {name: c}\r\nspec:\r\n"
                   "  devices:\r\n    requests:\r\n    - name: gpu\r\n      exactly:\r\n"
                   "        deviceClassName: gpu.nvidia.com")


def test_a_slice_drops_the_empty_values_v1_does_not_keep():
    old = ("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: d.example.com\n"
           '  nodeName: ""\n  allNodes: true\n  pool: {name: p, generation: 0, resourceSliceCount: 1}\n'
           "  devices:\n  - basic: {}\n    name: a\n  - name: b\n    basic:\n")
    new, [change] = convert_text(old)
    assert new == ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: d.example.com\n"
                   "  allNodes: true\n  pool: {name: p, generation: 0, resourceSliceCount: 1}\n"
                   "  devices:\n  - name: a\n  - name: b\n")
    assert change.changes[-1] == "spec: nodeName dropped (empty: v1 leaves it unset)"


def test_other_documents_are_left_as_they_are_with_a_note_for_dra_ones():
    old = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
           "metadata: {name: c}\n---\napiVersion: resource.k8s.io/v1alpha3\nkind: ResourceClaim\nmetadata: {name: old}\n"
           "---\napiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: r}\n---\n")
    new, changes = convert_text(old)
    assert new == old
    assert [(c.label, c.note) for c in changes] == [
        ("ResourceClaim/old", "left as it is: convert rewrites resource.k8s.io/v1beta1 and resource.k8s.io/v1beta2, "
                              "not resource.k8s.io/v1alpha3"),
        ("DeviceTaintRule/r", "left as it is: convert rewrites ResourceClaim, ResourceClaimTemplate, DeviceClass, "
                              "ResourceSlice")]


def test_the_items_of_a_list_are_converted():
    old = ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: resource.k8s.io/v1beta1\n  kind: ResourceSlice\n"
           "  metadata: {name: s}\n  spec:\n    nodeName: ''\n    devices:\n    - name: a\n      basic: {attributes: {}}\n"
           "- apiVersion: resource.k8s.io/v1beta2\n  kind: DeviceClass\n  metadata: {name: c}\n")
    new, changes = convert_text(old)
    assert new == ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: resource.k8s.io/v1\n  kind: ResourceSlice\n"
                   "  metadata: {name: s}\n  spec:\n    devices:\n    - name: a\n      attributes: {}\n"
                   "- apiVersion: resource.k8s.io/v1\n  kind: DeviceClass\n  metadata: {name: c}\n")
    assert [(c.index, c.item, c.label) for c in changes] == [(0, 0, "ResourceSlice/s"), (0, 1, "DeviceClass/c")]


def test_not_yaml_names_the_file_and_line():
    with pytest.raises(ConvertInputNotYaml, match=r"^bad.yaml:5:3: not YAML") as caught:
        convert_text("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nspec:\n  - a\n  b: [\n", "bad.yaml")
    assert "nothing was written" in caught.value.hint


def test_an_alias_is_left_where_it_is_written_and_its_anchor_converted():
    old = ("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
           "    requests:\n    - name: a\n      capacity: &c\n        requests: {memory: 10Gi}\n"
           "    - name: b\n      capacity: *c\n    - {name: c, capacity: *c}\n")
    new, _ = convert_text(old)
    assert new.endswith("    - name: b\n      exactly:\n        capacity: *c\n    - {name: c, exactly: {capacity: *c}}\n")
    assert [r["exactly"]["capacity"] for r in yaml.safe_load(new)["spec"]["devices"]["requests"]] == [
        {"requests": {"memory": "10Gi"}}] * 3


def test_pretty_json_keeps_one_entry_per_line():
    old = ('{\n  "apiVersion": "resource.k8s.io/v1beta1",\n  "kind": "ResourceClaim",\n  "metadata": {"name": "c"},\n'
           '  "spec": {\n    "devices": {\n      "requests": [\n        {\n          "name": "gpu",\n'
           '          "deviceClassName": "gpu.nvidia.com",\n          "selectors": [\n            {"cel": {"expression": "true"}}\n'
           '          ]\n        }\n      ]\n    }\n  }\n}\n')
    new, _ = convert_text(old, "c.json")
    assert new == old.replace("resource.k8s.io/v1beta1", "resource.k8s.io/v1").replace(
        '          "deviceClassName": "gpu.nvidia.com",\n          "selectors": [\n            {"cel": {"expression": "true"}}\n'
        '          ]\n',
        '          "exactly": {\n            "deviceClassName": "gpu.nvidia.com",\n            "selectors": [\n'
        '              {"cel": {"expression": "true"}}\n            ]\n          }\n')
    slice_ = ('{\n    "apiVersion": "resource.k8s.io/v1beta1",\n    "kind": "ResourceSlice",\n    "spec": {\n'
              '        "devices": [\n            {\n                "name": "a",\n                "basic": {\n'
              '                    "attributes": {\n                        "i": {"int": 0}\n                    }\n'
              '                }\n            }\n        ]\n    }\n}')
    assert convert_text(slice_)[0] == slice_.replace("v1beta1", "v1").replace(
        '                "basic": {\n                    "attributes": {\n                        "i": {"int": 0}\n'
        '                    }\n                }\n',
        '                "attributes": {\n                    "i": {"int": 0}\n                }\n')


def _v1(request: dict) -> dict:
    """The v1 form of a v1beta1 request, as the conversion functions state it (the test's own statement)."""
    exact = {k: v for k, v in request.items() if k in EXACT_FIELDS}
    rest = {k: v for k, v in request.items() if k not in EXACT_FIELDS}
    return {**rest, "exactly": exact} if exact else rest


_VALUES = {"deviceClassName": st.sampled_from(["gpu.nvidia.com", "mig.nvidia.com"]),
           "selectors": st.just([{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}]),
           "allocationMode": st.sampled_from(["ExactCount", "All"]), "count": st.integers(1, 8),
           "adminAccess": st.booleans(), "tolerations": st.just([{"key": "k", "operator": "Exists"}]),
           "capacity": st.just({"requests": {"memory": "10Gi"}})}


@st.composite
def _request(draw, index: int) -> dict:
    keys = draw(st.lists(st.sampled_from(sorted(_VALUES)), unique=True, max_size=4))
    if not keys:
        keys = ["firstAvailable"]
    order = draw(st.permutations(["name", *keys]))
    values = {"name": f"r{index}", "firstAvailable": [{"name": "a", "deviceClassName": "gpu.nvidia.com"}]}
    return {k: values[k] if k in values else draw(_VALUES[k]) for k in order}


@settings(max_examples=60)
@given(requests=st.integers(1, 3).flatmap(lambda n: st.tuples(*[_request(i) for i in range(n)])),
       mapping=st.sampled_from([2, 4]), offset=st.sampled_from([0, 2]), flow=st.lists(st.booleans(), min_size=3),
       comment=st.booleans())
def test_any_request_layout_converts_to_the_v1_form(requests, mapping, offset, flow, comment):
    from ruamel.yaml.comments import CommentedMap

    items = []
    for request, as_flow in zip(requests, flow):
        item = CommentedMap(request)
        if as_flow:
            item.fa.set_flow_style()
        elif comment:
            item.yaml_set_comment_before_after_key(list(request)[-1], before="a comment above the last key",
                                                   indent=mapping + offset)
        items.append(item)
    doc = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c"},
           "spec": {"devices": {"requests": items}}}
    writer = YAML()
    writer.indent(mapping=mapping, sequence=mapping + offset, offset=offset)
    out = io.StringIO()
    writer.dump(doc, out)
    old = "# head\n" + out.getvalue()
    new, _ = convert_text(old)
    loaded = yaml.safe_load(new)
    assert loaded["apiVersion"] == "resource.k8s.io/v1"
    assert loaded["spec"]["devices"]["requests"] == [_v1(dict(r)) for r in requests]
    head = old[:old.index("requests:")]
    assert new.startswith(head.replace("resource.k8s.io/v1beta1", "resource.k8s.io/v1"))
    if comment:
        assert new.count("# a comment above the last key") == old.count("# a comment above the last key")
