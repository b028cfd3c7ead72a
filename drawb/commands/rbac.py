"""``rbac``: print drawb's least-privilege RBAC manifest for one namespace and one subject."""

from __future__ import annotations

import html

from drawb.commands.registry import arg, command
from drawb.errors import UsageError
from drawb.session import Session


class Manifest(str):
    """YAML text that prints as itself (pipe it into ``kubectl apply -f -``) and shows preformatted in a notebook."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(str(self))}</pre>"


@command(
    "rbac",
    "Print drawb's least-privilege RBAC manifest: a ClusterRole to read slices, classes, nodes and claims, a Role "
    "to run checks in one namespace, and bindings for one user, group or ServiceAccount. Apply it yourself "
    "(kubectl apply -f -); drawb never applies it.",
    arg("-n", "--namespace", help="the namespace the user works in (default: the session's)"),
    arg("--user", help="bind the roles to this user (as the API server names it: a certificate's CN, an OIDC name)"),
    arg("--group", help="bind the roles to this group"),
    arg("--service-account", help="bind the roles to this ServiceAccount: NAME (in the namespace) or NAMESPACE:NAME"),
)
def rbac(session: Session, args, cell) -> Manifest:
    from drawb.access import rbac as manifest
    from drawb.api.names import is_dns1123_label

    namespace = args.namespace or session.namespace
    problems = is_dns1123_label(namespace)
    if problems:
        raise UsageError(f"namespace {namespace!r}: {'; '.join(problems)}", hint="name a namespace, e.g. -n gpu-team")
    chosen = [v for v in (args.user, args.group, args.service_account) if v]
    if len(chosen) > 1:
        raise UsageError("name at most one of --user, --group and --service-account",
                         hint="render one manifest per subject; the roles are the same")
    who = manifest.subject(user=args.user, group=args.group, service_account=args.service_account,
                           namespace=namespace) if chosen else None
    return Manifest(manifest.to_yaml(manifest.manifest(namespace, who)))
