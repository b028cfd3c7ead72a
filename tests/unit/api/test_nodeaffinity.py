"""Node selectors, required node affinity and taints as the scheduler reads them."""

from __future__ import annotations

import pytest

from drawb.api.nodeaffinity import (
    NODE_AFFINITY,
    NodeSelectorError,
    compile_node_selector,
    node_exclusion,
    node_filter,
    pod_matches_node,
    selector_matches,
    tolerates,
    untolerated_taint,
)

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


def test_gt_and_lt_parse_integers_as_go_does():
    node = {"metadata": {"name": "n", "labels": {"gpus": "8", "odd": "1_0"}}}
    gt = lambda key, value: {"nodeSelectorTerms": [{"matchExpressions": [  # noqa: E731
        {"key": key, "operator": "Gt", "values": [value]}]}]}
    assert selector_matches(gt("gpus", "+4"), node)
    assert not selector_matches(gt("odd", "4"), node)  # "1_0" is no integer to strconv.ParseInt
    with pytest.raises(NodeSelectorError, match="exactly one integer value"):
        compile_node_selector(gt("gpus", "1_0"))


def test_a_pod_term_that_cannot_be_parsed_is_ignored_and_the_others_still_match():
    bad = {"matchExpressions": [{"key": "zone", "operator": "In", "values": []}]}
    good = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    assert pod_matches_node(_affinity(bad, good), NODE)
    exclusion = node_exclusion({"spec": {"tolerations": [{"operator": "Exists"}], **_affinity(bad)["spec"]}}, NODE)
    assert exclusion.code == "node-affinity" and exclusion.scheduler == NODE_AFFINITY
    assert "cannot be parsed: zone: for 'in', 'notin' operators, values set can't be empty" in exclusion.detail


def test_tolerations_follow_tolerates_taint():
    taint = {"key": "gpu", "value": "true", "effect": "NoSchedule"}
    assert tolerates({"operator": "Exists"}, taint)
    assert tolerates({"key": "gpu", "value": "true"}, taint)
    assert tolerates({"value": "true"}, taint)  # no key: the value alone decides, as in core/v1
    assert not tolerates({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, taint)
    assert not tolerates({"key": "gpu", "operator": "Lt", "value": "true"}, taint)  # an operator it does not know


def test_each_filter_gives_its_code_the_schedulers_words_and_the_cause():
    cordoned = {**NODE, "spec": {**NODE["spec"], "unschedulable": True}}
    assert node_exclusion({"spec": {}}, cordoned).code == "unschedulable"
    taint = node_exclusion({"spec": {}}, NODE)
    assert (taint.code, taint.scheduler, taint.detail) == (
        "taint", "node(s) had untolerated taint {gpu: true}", "node taint gpu=true:NoSchedule not tolerated by the pod")
    tolerant = {"tolerations": [{"key": "gpu", "operator": "Exists"}]}
    miss = node_exclusion({"spec": {**tolerant, "nodeSelector": {"zone": "b"}}}, NODE)
    assert (miss.code, miss.detail) == ("node-affinity", "the pod's nodeSelector zone=b does not match (node has zone=a)")
    assert node_filter({"spec": {**tolerant, "nodeSelector": {"zone": "b"}}}, NODE) == NODE_AFFINITY
    assert node_exclusion({"spec": tolerant}, NODE) is None
