"""What the connected user may do, asked before a write: one SelfSubjectRulesReview per namespace (the rules
RBAC gives the user there, cluster roles included) and one SelfSubjectReview (who the user is).

A write command compares the rights it needs with these rules and names every one that is missing
before it creates anything.
"""

from __future__ import annotations

from kubernetes.client import ApiClient

from drawb.cluster.kube.rest import request
from drawb.cluster.protocol import ClusterError
from drawb.cluster.refusal import Right


def rules_allow(rules: list[dict], right: Right) -> bool:
    """Whether one of a SelfSubjectRulesReview's ``resourceRules`` grants ``right`` (wildcards included;
    a rule limited to named objects does not count)."""
    for rule in rules:
        if rule.get("resourceNames"):
            continue
        verbs, groups, resources = (rule.get(key) or [] for key in ("verbs", "apiGroups", "resources"))
        base = right.resource.split("/", 1)[0]
        if (("*" in verbs or right.verb in verbs) and ("*" in groups or right.group in groups)
                and ("*" in resources or right.resource in resources or f"{base}/*" in resources)):
            return True
    return False


def missing_rights(client: ApiClient, rights: list[Right]) -> tuple[str, list[Right]]:
    """Who the client authenticates as, and which of ``rights`` RBAC does not give it (one review per namespace).

    A review the server does not answer completely (``incomplete``: another authorizer decides too) counts
    nothing as missing: the write itself then meets the authorizers.
    """
    user = ""
    try:
        review = request(client, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                         body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
        user = ((review.get("status") or {}).get("userInfo") or {}).get("username", "")
    except ClusterError:  # an older server, or one that does not say: the message names no user then
        pass
    missing: list[Right] = []
    for namespace in sorted({r.namespace or "" for r in rights}):
        review = request(client, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                         body={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
                               "spec": {"namespace": namespace or "default"}})
        status = review.get("status") or {}
        if status.get("incomplete"):
            continue
        rules = status.get("resourceRules") or []
        missing += [r for r in rights if (r.namespace or "") == namespace and not rules_allow(rules, r)]
    return user, missing
