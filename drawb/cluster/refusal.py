"""403 answers from RBAC, read: which verb on which resource (and namespace) was refused, for whom,
and which role of drawb's RBAC manifest grants it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from drawb.access import rbac
from drawb.cluster.protocol import ClusterError
from drawb.errors import PROG

# The authorizer's wording (k8s.io/apiserver, endpoints/handlers/responsewriters/errors.go: forbiddenMessage).
_RESOURCE = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>\S+) resource "(?P<resource>[^"]+)" in API group "(?P<group>[^"]*)"'
    r'(?: in the namespace "(?P<namespace>[^"]*)"| at the cluster scope)?'
)
_PATH = re.compile(r'User "(?P<user>[^"]*)" cannot (?P<verb>\S+) path "(?P<path>[^"]+)"')
_SERVICE_ACCOUNT = re.compile(r"^system:serviceaccount:(?P<namespace>[^:]+):(?P<name>[^:]+)$")


class RbacRefused(ClusterError):
    """The API server's RBAC refused a request; says what was refused and which drawb role grants it."""

    title = "RbacRefused"

    def __init__(self, message: str, *, verb: str, resource: str, group: str | None, namespace: str | None,
                 user: str, hint: str, server_message: str):
        super().__init__(message, status=403, reason="Forbidden", hint=hint, server_message=server_message)
        self.verb, self.resource, self.group, self.namespace, self.user = verb, resource, group, namespace, user


@dataclass(frozen=True)
class Right:
    """A verb on a resource (``pods``, ``pods/log``) of an API group ("" is the core group) in a namespace
    (None: cluster-scoped)."""

    verb: str
    resource: str
    group: str
    namespace: str | None

    def shown(self) -> str:
        """``create on resourceclaims.resource.k8s.io`` as RBAC's messages write it."""
        return f"{self.verb} on {self.resource}" + (f".{self.group}" if self.group else "")


class RightsMissing(ClusterError):
    """A write command asked first: RBAC does not give the user every right it needs, so it wrote nothing."""

    def __init__(self, message: str, *, missing: list[Right], user: str, hint: str):
        super().__init__(message, status=403, reason="Forbidden", hint=hint)
        self.missing, self.user = missing, user


def require_rights(cluster: object, command: str, rights: list[Right]) -> None:
    """Raise RightsMissing, naming every right of ``rights`` RBAC does not give, before ``command`` writes;
    a cluster that cannot say (the simulated one) passes."""
    ask = getattr(cluster, "missing_rights", None)
    if ask is None or not rights:
        return
    user, missing = ask(rights)
    if not missing:
        return
    places = "; ".join(", ".join(r.shown() for r in rights) + (f' in namespace "{ns}"' if ns else " at the cluster scope")
                       for ns, rights in _by_namespace(missing).items())
    whom = f' user "{user}"' if user else " this user"
    beyond = [r for r in missing if not rbac.granted_by(r.verb, r.resource, r.group, r.namespace is not None)]
    namespace = next((r.namespace for r in missing if r.namespace), None)
    subject = _subject_flag(user) if user else "--user USER"
    apply = f"{PROG} rbac -n {namespace or 'NAMESPACE'} {subject} | kubectl apply -f -"
    if not beyond:
        hint = f"ask a cluster admin to apply drawb's RBAC manifest: {apply}"
    else:
        extra = "; ".join(f"{_rules(rights)} to " + (f'a Role in namespace "{ns}"' if ns else "a ClusterRole")
                          for ns, rights in _by_namespace(beyond).items())
        hint = (f"drawb's RBAC manifest does not grant {'them' if len(beyond) == len(missing) else 'all of them'}: "
                f"ask a cluster admin to add {extra}, bound to{whom}"
                + (f", and to apply drawb's manifest for the rest: {apply}" if len(beyond) < len(missing) else ""))
    raise RightsMissing(f"{command} needs rights RBAC does not give{whom}: {places}; nothing was written",
                        missing=missing, user=user, hint=hint)


def _by_namespace(rights: list[Right]) -> dict[str | None, list[Right]]:
    out: dict[str | None, list[Right]] = {}
    for right in rights:
        out.setdefault(right.namespace, []).append(right)
    return out


def _rules(rights: list[Right]) -> str:
    """The RBAC rules that grant ``rights``, one per API group and resource, in the flow style of a Role's YAML."""
    verbs: dict[tuple[str, str], list[str]] = {}
    for right in rights:
        verbs.setdefault((right.group, right.resource), []).append(right.verb)
    rules = [rule_text(group, resource, tuple(v)) for (group, resource), v in verbs.items()]
    return ("the rule " if len(rules) == 1 else "the rules ") + ", ".join(rules)


def rule_text(group: str | None, resource: str, verbs: tuple[str, ...]) -> str:
    """One RBAC rule as a Role's YAML writes it in flow style; ``group`` None: ``resource`` is a URL path."""
    listed = ", ".join(f'"{v}"' for v in verbs)
    if group is None:
        return f'{{nonResourceURLs: ["{resource}"], verbs: [{listed}]}}'
    return f'{{apiGroups: ["{group}"], resources: ["{resource}"], verbs: [{listed}]}}'


def _subject_flag(user: str) -> str:
    sa = _SERVICE_ACCOUNT.match(user)
    return f"--service-account {sa['namespace']}:{sa['name']}" if sa else f"--user {user}"


def rbac_refusal(server_message: str) -> RbacRefused | None:
    """The RbacRefused a 403's message describes, or None when the 403 is not RBAC's (admission, a terminating namespace)."""
    found = _RESOURCE.search(server_message)
    if found:
        verb, resource, group, namespace = found["verb"], found["resource"], found["group"], found["namespace"]
        shown = resource + (f".{group}" if group else "")
        where = f' in namespace "{namespace}"' if namespace else " at the cluster scope"
    else:
        found = _PATH.search(server_message)
        if not found:
            return None
        verb, resource, group, namespace = found["verb"], found["path"], None, None
        shown, where = f"path {resource}", ""
    user = found["user"]
    refused = f'RBAC refused {verb} on {shown}{where} for user "{user}"'
    role = rbac.granted_by(verb, resource, group, namespaced=namespace is not None)
    apply = f"{PROG} rbac -n {namespace or 'NAMESPACE'} {_subject_flag(user)} | kubectl apply -f -"
    if role == rbac.USER:
        message = f"{refused}; the {rbac.USER} Role of drawb's RBAC manifest grants it in its own namespace"
        hint = f"ask a cluster admin to apply drawb's RBAC manifest in {namespace}: {apply}"
    elif role == rbac.READER:
        message = f"{refused}; the {rbac.READER} ClusterRole of drawb's RBAC manifest grants it"
        hint = f"ask a cluster admin to apply drawb's RBAC manifest: {apply}"
    elif namespace is None and rbac.namespace_only(verb, resource, group):
        message = (f"{refused}; drawb's RBAC manifest grants it only inside one namespace "
                   f"(the {rbac.USER} Role)")
        hint = (f"name the namespace: -n NAMESPACE; for every namespace, a cluster admin would add the rule "
                f"{rule_text(group, resource, (verb,))} to a ClusterRole bound to you")
    else:
        message = f"{refused}; drawb's RBAC manifest does not grant it"
        where = f'a Role in namespace "{namespace}"' if namespace else "a ClusterRole"
        hint = f"ask a cluster admin to add the rule {rule_text(group, resource, (verb,))} to {where} bound to you"
    return RbacRefused(message, verb=verb, resource=resource, group=group, namespace=namespace, user=user,
                       hint=hint, server_message=server_message)
