"""The checker's names for CEL types, and how drawb declares a function to it."""

from __future__ import annotations

from cel_expr_python import cel

T = cel.Type
QUANTITY = T.AbstractType("kubernetes.Quantity")
SEMVER = T.AbstractType("kubernetes.Semver")
URL = T.AbstractType("kubernetes.URL")
IP = T.AbstractType("net.IP")
CIDR = T.AbstractType("net.CIDR")
FORMAT = T.AbstractType("kubernetes.NamedFormat")
DEVICE = T.AbstractType("kubernetes.DRADevice")
S, I, B, D, U = T.STRING, T.INT, T.BOOL, T.DOUBLE, T.UINT


def _unused(*_args):
    raise RuntimeError("drawb evaluates CEL itself; the checker's runtime is not used")


# A receiver type no value has: a global-only function also gets a member overload on it, so that
# calling it as a member (`q.sign()`) fails as in cel-go, with "found no matching overload" and the
# receiver's type, rather than the C++ checker's "undeclared reference".
_NO_RECEIVER = T.AbstractType("drawb.NoReceiver")


def declare(name: str, *overloads: tuple) -> cel.FunctionDecl:
    """A function for the checker: overloads as ``(overload id, parameter types, result type, is member)``."""
    decls = [cel.Overload(oid, result, params, is_member=member, impl=_unused) for oid, params, result, member in overloads]
    if not any(member for *_, member in overloads) and "." not in name:
        params = overloads[0][1]
        decls.append(
            cel.Overload(f"drawb_no_receiver_{name}", overloads[0][2], [_NO_RECEIVER, *params[1:]], is_member=True, impl=_unused)
        )
    return cel.FunctionDecl(name, decls)
