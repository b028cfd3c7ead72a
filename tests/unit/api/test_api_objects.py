"""drawb.api.objects: reading plain JSON objects and reporting malformed ones."""

from __future__ import annotations

import pytest

from drawb.api import objects
from drawb.api.objects import ObjectError

SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "node-a-gpu", "uid": "u-1", "labels": {"a": "b"}},
    "spec": {
        "driver": "gpu.nvidia.com",
        "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
        "devices": [
            {"name": "gpu-0", "attributes": {"index": {"int": 0}}, "capacity": {"gpu.nvidia.com/memory": {"value": "80Gi"}}},
            {"name": "gpu-1", "attributes": None},
            {"name": "gpu-2", "attributes": ["not", "a", "map"]},
        ],
    },
}
CLAIM = {"kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "gpu-test"}, "spec": {"devices": {"requests": []}}}


def test_metadata_accessors():
    assert objects.name(SLICE) == "node-a-gpu"
    assert objects.namespace(SLICE) is None
    assert objects.namespace(CLAIM) == "gpu-test"
    assert objects.kind(SLICE) == "ResourceSlice"
    assert objects.api_version(SLICE) == "resource.k8s.io/v1"
    assert objects.uid(SLICE) == "u-1"
    assert objects.labels(SLICE) == {"a": "b"}
    assert objects.annotations(SLICE) == {}
    assert objects.meta({}) == {}


def test_dig_paths():
    assert objects.dig(SLICE, "spec.devices[0].name") == "gpu-0"
    assert objects.dig(SLICE, "spec.devices[0].attributes.index.int") == 0
    assert objects.dig(SLICE, ("spec", "devices", 0, "capacity", "gpu.nvidia.com/memory", "value")) == "80Gi"
    assert objects.dig(SLICE, "spec.devices[0].capacity[gpu.nvidia.com/memory].value") == "80Gi"
    assert objects.dig(SLICE, "spec.devices[9].name", "none") == "none"
    assert objects.dig(SLICE, "spec.devices[1].attributes.index", "none") == "none"
    assert objects.dig(SLICE, "spec.nodeName") is None
    assert objects.dig(CLAIM, "spec.devices.requests", "x") == []


def test_wrong_shape_names_object_and_field():
    with pytest.raises(ObjectError) as err:
        objects.get_map(SLICE, "spec.devices[2].attributes")
    assert str(err.value) == "ResourceSlice 'node-a-gpu' field spec.devices[2].attributes: expected a map, got list"
    with pytest.raises(ObjectError) as err:
        objects.dig(SLICE, "spec.devices[2].attributes.index")
    assert str(err.value) == "ResourceSlice 'node-a-gpu' field spec.devices[2].attributes: expected a map, got list"
    with pytest.raises(ObjectError, match=r"ResourceClaim 'gpu-test/c' field spec: expected a list, got map"):
        objects.dig(CLAIM, "spec[0]")
    with pytest.raises(ObjectError, match=r"field spec.driver: expected a list, got string"):
        objects.get_list(SLICE, "spec.driver")
    with pytest.raises(ObjectError, match=r"field spec.pool.generation: expected a string, got int"):
        objects.get_str(SLICE, "spec.pool.generation")


def test_typed_getters_default_when_absent():
    assert objects.get_map(SLICE, "spec.devices[1].attributes") == {}
    assert objects.get_list(SLICE, "spec.taints") == []
    assert objects.get_str(SLICE, "spec.nodeName", "-") == "-"


def test_format_path_and_describe():
    assert objects.format_path(("spec", "devices", 3, "capacity", "gpu.nvidia.com/memory")) == "spec.devices[3].capacity[gpu.nvidia.com/memory]"
    assert objects.describe({"metadata": {"generateName": "claim-"}}) == "object 'claim-'"
    assert objects.describe({}) == "object '<unnamed>'"
    with pytest.raises(ValueError, match="malformed field path"):
        objects.dig(SLICE, "spec..devices")


def test_plain_converts_client_models_to_camel_case():
    from kubernetes.client import V1ObjectMeta

    assert objects.plain(V1ObjectMeta(name="x", resource_version="7")) == {"name": "x", "resourceVersion": "7"}
    assert objects.plain(SLICE) is SLICE
    assert objects.plain([V1ObjectMeta(name="y")]) == [{"name": "y"}]
    with pytest.raises(TypeError):
        objects.plain(object())
