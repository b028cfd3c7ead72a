"""The quick schema check says valid exactly when jsonschema finds nothing: every document of both corpora and
of the custom-kinds data, and variants of each with one planted fault (a wrong type, an unknown field, a
missing required field, a value outside an enum), at the oldest and newest schema sets drawb reads for DRA."""

from __future__ import annotations

import copy
import itertools

import pytest
import yaml

from drawb.apirules.schema import _quick_check, _validator
from tests.conftest import DATA
from tests.contract.public_corpus import load_documents

VERSIONS = ["1.34.0", "1.37.0"]
KINDS = ["ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice", "Pod", "Deployment", "Job",
         "DaemonSet", "Namespace", "ServiceAccount", "ConfigMap", "Role", "RoleBinding", "ClusterRole"]


def _documents() -> list[dict]:
    docs = [d.body for d in load_documents()]
    for path in sorted((DATA / "corpus").glob("*.yaml")) + sorted((DATA / "custom-kinds").glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    return docs


def _leaves(node, path=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaves(value, (*path, index))
    else:
        yield path, node


def _set(doc: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(doc)
    node = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return out


def _variants(doc: dict) -> list[dict]:
    """``doc`` with one fault planted at each of a few places."""
    out = [doc]
    for path, value in itertools.islice(_leaves(doc), 0, None, 11):
        if not path:
            continue
        out.append(_set(doc, path, {"unexpected": 1} if isinstance(value, (str, int, float, bool)) else "text"))
        out.append(_set(doc, path, 7 if isinstance(value, str) else str(value)))
        if isinstance(value, str):
            out.append(_set(doc, path, value + "-not-an-enum-value"))
        parent = path[:-1]
        if parent and isinstance(path[-1], str):
            trimmed = copy.deepcopy(doc)
            target = trimmed
            for part in parent:
                target = target[part]
            del target[path[-1]]
            out.append(trimmed)
            out.append(_set(doc, (*parent, "unknownField"), 1))
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_the_quick_check_agrees_with_jsonschema(version):
    compared = disagreed = 0
    wrong = []
    for doc in _documents():
        api_version, kind = str(doc.get("apiVersion")), str(doc.get("kind"))
        validator, quick = _validator(version, api_version, kind), _quick_check(version, api_version, kind)
        if validator is None or quick is None:
            continue
        for variant in _variants(doc):
            compared += 1
            fits = next(validator.iter_errors(variant), None) is None
            if quick(variant) != fits:
                disagreed += 1
                wrong.append((kind, (variant.get("metadata") or {}).get("name"), fits))
    assert compared > 1500
    assert wrong[:5] == [] and disagreed == 0


@pytest.mark.parametrize("version", VERSIONS)
def test_the_common_kinds_compile(version):
    api_versions = {"ResourceClaim": "resource.k8s.io/v1", "ResourceClaimTemplate": "resource.k8s.io/v1",
                    "DeviceClass": "resource.k8s.io/v1", "ResourceSlice": "resource.k8s.io/v1", "Deployment": "apps/v1",
                    "DaemonSet": "apps/v1", "Job": "batch/v1", "Role": "rbac.authorization.k8s.io/v1",
                    "RoleBinding": "rbac.authorization.k8s.io/v1", "ClusterRole": "rbac.authorization.k8s.io/v1"}
    missing = [k for k in KINDS if _quick_check(version, api_versions.get(k, "v1"), k) is None]
    assert missing == []
