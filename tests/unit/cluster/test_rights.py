"""Reading a SelfSubjectRulesReview's rules: which rights they grant (the live proof is in
tests/live/test_least_privilege_live.py)."""

from __future__ import annotations

from drawb.cluster.kube.rights import rules_allow
from drawb.cluster.refusal import Right

POD_CREATE = Right("create", "pods", "", "team-a")


def test_a_rule_grants_its_verbs_groups_and_resources_wildcards_included():
    assert rules_allow([{"verbs": ["get", "create"], "apiGroups": [""], "resources": ["pods"]}], POD_CREATE)
    assert rules_allow([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}], POD_CREATE)
    assert rules_allow([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods/*"]}], Right("get", "pods/log", "", "a"))
    assert not rules_allow([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}], POD_CREATE)
    assert not rules_allow([{"verbs": ["create"], "apiGroups": ["apps"], "resources": ["pods"]}], POD_CREATE)
    assert not rules_allow([{"verbs": ["create"], "apiGroups": [""], "resources": ["pods/log"]}], POD_CREATE)


def test_a_rule_for_named_objects_only_does_not_count():
    named = {"verbs": ["create"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["one"]}
    assert not rules_allow([named], POD_CREATE)
