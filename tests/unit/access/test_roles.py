"""Reading any role's rules as the RBAC authorizer matches them."""

from __future__ import annotations

from drawb.access.roles import is_bootstrap, role_grants, rule_grants


def test_verbs_groups_and_resources_match_exactly_or_by_wildcard():
    rule = {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims", "resourceclaims/status"],
            "verbs": ["update"]}
    assert rule_grants(rule, "update", "resource.k8s.io", "resourceclaims/status")
    assert not rule_grants(rule, "patch", "resource.k8s.io", "resourceclaims/status")
    assert not rule_grants(rule, "update", "resource.k8s.io", "resourceclaims/binding")
    assert not rule_grants(rule, "update", "", "resourceclaims")
    everything = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
    assert rule_grants(everything, "associated-node:update", "resource.k8s.io", "resourceclaims/driver")
    assert rule_grants({**rule, "resources": ["resourceclaims/*"]}, "update", "resource.k8s.io", "resourceclaims/binding")
    assert rule_grants({**rule, "resources": ["*/binding"]}, "update", "resource.k8s.io", "resourceclaims/binding")
    assert not rule_grants({**rule, "resources": ["resourceclaims/*"]}, "update", "resource.k8s.io", "resourceclaims")


def test_resource_names_limit_a_rule_to_requests_naming_one_of_them():
    rule = {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims/driver"], "resourceNames": ["gpu.example.com"],
            "verbs": ["associated-node:update"]}
    assert rule_grants(rule, "associated-node:update", "resource.k8s.io", "resourceclaims/driver", "gpu.example.com")
    assert not rule_grants(rule, "associated-node:update", "resource.k8s.io", "resourceclaims/driver", "other")
    assert not rule_grants(rule, "associated-node:update", "resource.k8s.io", "resourceclaims/driver")
    assert rule_grants(rule, "associated-node:update", "resource.k8s.io", "resourceclaims/driver", None)


def test_a_role_grants_what_any_rule_grants_and_bootstrap_roles_are_told_by_their_label():
    role = {"metadata": {"name": "system:kube-scheduler", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
                      {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims/binding"], "verbs": ["patch"]}]}
    assert role_grants(role, "patch", "resource.k8s.io", "resourceclaims/binding")
    assert not role_grants({"rules": None}, "get", "", "pods")
    assert is_bootstrap(role) and not is_bootstrap({"metadata": {"name": "mine"}})
