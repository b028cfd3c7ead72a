"""Node selectors, required node affinity and taints as the scheduler reads them."""

from __future__ import annotations

from drawb.api.nodeaffinity import pod_matches_node, selector_matches, untolerated_taint

NODE = {"metadata": {"name": "n1", "labels": {"zone": "a", "gpus": "8"}},
        "spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]}}


def _affinity(*terms: dict) -> dict:
    return {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": list(terms)}}}}}


def test_terms_are_ored_and_requirements_anded():
    zone_b = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
    many = {"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["4"]},
                                 {"key": "zone", "operator": "NotIn", "values": ["b"]}]}
    assert not pod_matches_node(_affinity(zone_b), NODE)
    assert pod_matches_node(_affinity(zone_b, many), NODE)
    assert pod_matches_node(_affinity({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}), NODE)
    assert not selector_matches({"nodeSelectorTerms": [{}]}, NODE)  # an empty term matches nothing
    assert selector_matches(None, NODE)


def test_node_selector_labels_must_all_match():
    assert pod_matches_node({"spec": {"nodeSelector": {"zone": "a"}}}, NODE)
    assert not pod_matches_node({"spec": {"nodeSelector": {"zone": "a", "gpus": "4"}}}, NODE)


def test_taints_need_a_toleration():
    assert untolerated_taint({"spec": {}}, NODE)["key"] == "gpu"
    assert untolerated_taint({"spec": {"tolerations": [{"key": "gpu", "operator": "Exists"}]}}, NODE) is None
    assert untolerated_taint({"spec": {"tolerations": [{"key": "gpu", "value": "false"}]}}, NODE) is not None
