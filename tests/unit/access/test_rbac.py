"""drawb's RBAC manifest, the ``rbac`` command on both front ends, and the reading of RBAC's 403 messages."""

from __future__ import annotations

import yaml

from drawb.access import rbac
from drawb.cluster.refusal import RbacRefused, rbac_refusal
from drawb.cli import main
from drawb.cluster.kube.failures import from_status

SA_USER = "system:serviceaccount:team-a:runner"


def test_manifest_has_the_two_roles_and_bindings_to_the_subject():
    objects = list(yaml.safe_load_all(rbac.to_yaml(rbac.manifest("team-a", rbac.subject(service_account="runner",
                                                                                        namespace="team-a")))))
    assert [o["kind"] for o in objects] == ["ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"]
    cluster_role, role, cluster_binding, binding = objects
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == "team-a"
    assert cluster_binding["subjects"] == [{"kind": "ServiceAccount", "name": "runner", "namespace": "team-a"}]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "drawb-user"}
    # read-only outside the namespace; writes only inside it
    assert {v for r in cluster_role["rules"] for v in r["verbs"]} == {"get", "list", "watch"}
    writable = {res for r in role["rules"] if "create" in r["verbs"] for res in r["resources"]}
    assert writable == {"resourceclaimtemplates", "resourceclaims", "pods"}
    assert all(o["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "drawb" for o in objects)


def test_every_rule_is_explained_in_the_yaml():
    text = rbac.to_yaml(rbac.manifest("team-a"))
    for rule in rbac.CLUSTER_RULES + rbac.NAMESPACE_RULES:
        assert f"# {rule.why}\n" in text


def test_which_role_grants_what():
    assert rbac.granted_by("list", "resourceslices", "resource.k8s.io", namespaced=False) == rbac.READER
    assert rbac.granted_by("create", "resourceclaimtemplates", "resource.k8s.io", namespaced=True) == rbac.USER
    assert rbac.granted_by("get", "pods/log", "", namespaced=True) == rbac.USER
    assert rbac.granted_by("list", "pods", "", namespaced=False) is None
    assert rbac.namespace_only("list", "pods", "")
    assert rbac.granted_by("create", "deviceclasses", "resource.k8s.io", namespaced=False) is None
    assert rbac.granted_by("get", "/metrics", None, namespaced=False) == rbac.READER


def test_a_namespaced_refusal_names_verb_resource_namespace_user_and_the_role():
    server = (f'resourceclaimtemplates.resource.k8s.io "check-1" is forbidden: User "{SA_USER}" cannot create '
              'resource "resourceclaimtemplates" in API group "resource.k8s.io" in the namespace "other"')
    import orjson

    error = from_status(403, orjson.dumps({"kind": "Status", "message": server, "reason": "Forbidden"}), "Forbidden")
    assert isinstance(error, RbacRefused) and error.message == server
    assert str(error) == (f'RBAC refused create on resourceclaimtemplates.resource.k8s.io in namespace "other" for '
                          f'user "{SA_USER}"; the drawb-user Role of drawb\'s RBAC manifest grants it in its own '
                          'namespace')
    assert error.hint == ("ask a cluster admin to apply drawb's RBAC manifest in other: "
                          "{prog} rbac -n other --service-account team-a:runner | kubectl apply -f -")
    assert (error.verb, error.resource, error.group, error.namespace) == ("create", "resourceclaimtemplates",
                                                                          "resource.k8s.io", "other")
    assert error.render("drawb").endswith("drawb rbac -n other --service-account team-a:runner | kubectl apply -f -")


def test_cluster_scope_and_path_refusals():
    nodes = rbac_refusal('nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the '
                         'cluster scope')
    assert str(nodes).startswith('RBAC refused list on nodes at the cluster scope for user "alice"; the drawb-reader '
                                 "ClusterRole")
    assert "--user alice" in nodes.hint
    pods = rbac_refusal('pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster '
                        'scope')
    assert "grants it only inside one namespace" in str(pods)
    assert pods.hint == ('name the namespace: -n NAMESPACE; for every namespace, a cluster admin would add the rule '
                         '{apiGroups: [""], resources: ["pods"], verbs: ["list"]} to a ClusterRole bound to you')
    classes = rbac_refusal('deviceclasses.resource.k8s.io is forbidden: User "alice" cannot create resource '
                           '"deviceclasses" in API group "resource.k8s.io" at the cluster scope')
    assert str(classes).endswith("drawb's RBAC manifest does not grant it")
    assert classes.hint == ('ask a cluster admin to add the rule {apiGroups: ["resource.k8s.io"], resources: '
                            '["deviceclasses"], verbs: ["create"]} to a ClusterRole bound to you')
    secrets = rbac_refusal('secrets is forbidden: User "alice" cannot get resource "secrets" in API group "" in the '
                           'namespace "team-a"')
    assert secrets.hint == ('ask a cluster admin to add the rule {apiGroups: [""], resources: ["secrets"], verbs: '
                            '["get"]} to a Role in namespace "team-a" bound to you')
    metrics = rbac_refusal('forbidden: User "alice" cannot get path "/metrics"')
    assert str(metrics).startswith('RBAC refused get on path /metrics for user "alice"; the drawb-reader ClusterRole')


def test_a_403_that_is_not_rbac_stays_the_servers_message():
    body = b'{"kind":"Status","message":"pods \\"p\\" is forbidden: violates PodSecurity \\"restricted:latest\\"","reason":"Forbidden"}'
    error = from_status(403, body, "Forbidden")
    assert not isinstance(error, RbacRefused) and "violates PodSecurity" in str(error) and error.status == 403


def test_rbac_command_on_the_cli(capsys):
    assert main(["rbac", "-n", "team-a", "--user", "alice@example.com"]) == 0
    out = capsys.readouterr().out
    docs = list(yaml.safe_load_all(out))
    assert docs[2]["subjects"][0] == {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice@example.com"}
    assert main(["rbac", "-n", "Not_A_Namespace"]) == 2
    assert "UsageError: namespace 'Not_A_Namespace'" in capsys.readouterr().err
    assert main(["rbac", "--user", "a", "--group", "b"]) == 2


def test_rbac_command_in_the_notebook(shell):
    manifest = shell.run("%dra rbac -n team-a --group ml-team")
    assert "kind: RoleBinding" in manifest and "<pre>" in manifest._repr_html_()
    assert "UsageError: name at most one" in shell.fails("%dra rbac --user a --service-account b")
