"""The Kubernetes CIDR library: cidr(), isCIDR, containsIP, containsCIDR, prefixLength, masked."""

from __future__ import annotations

import ipaddress
from typing import Any

from drawb.cel.decls import B, CIDR, I, IP, S
from drawb.cel.library._registry import constant_cost, fn, is_str, string_arg_cost
from drawb.cel.library.ip import CIDRValue, parse_ip
from drawb.cel.ranges import ONE, STRING_TRAVERSAL, Est
from drawb.cel.values import CelError


_ADDRESS = Est(4, 16)  # an IP address in bytes


def _parsed_argument(c, overload, args, cost):
    """A string argument is parsed first: reading its characters adds to the cost."""
    if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
        cost = cost.add(c.size_of(args[0]).factor(STRING_TRAVERSAL))
    return cost, None


def _contains_ip_cost(c, overload, target, args):
    if not args:
        return None
    return _parsed_argument(c, overload, args, _ADDRESS.add(_ADDRESS).factor(STRING_TRAVERSAL))


def _contains_cidr_cost(c, overload, target, args):
    if not args:
        return None
    cost = _ADDRESS.add(_ADDRESS).factor(STRING_TRAVERSAL).add(_ADDRESS.factor(STRING_TRAVERSAL)).add(ONE)
    return _parsed_argument(c, overload, args, cost)


def _parse_cidr(s: str) -> CIDRValue:
    try:
        addr_text, _, _ = s.partition("/")
        net = ipaddress.ip_network(s, strict=False)
        addr = ipaddress.ip_address(addr_text)
    except ValueError:
        raise CelError(f"network address parse error during conversion from string: netip.ParsePrefix({s!r}): bad prefix") from None
    return CIDRValue(addr, net, s)


@fn("cidr", ("string_to_cidr", [S], CIDR, False), cost=string_arg_cost)
def _cidr(s: Any) -> CIDRValue:
    return _parse_cidr(s)


@fn("isCIDR", ("is_cidr", [S], B, False), cost=string_arg_cost)
def _is_cidr(s: Any) -> bool:
    try:
        _parse_cidr(s)
    except CelError:
        return False
    return True


@fn("containsIP", ("cidr_contains_ip_string", [CIDR, S], B, True), ("cidr_contains_ip_ip", [CIDR, IP], B, True), cost=_contains_ip_cost)
def _contains_ip(c: Any, other: Any) -> bool:
    addr = parse_ip(other).addr if is_str(other) else other.addr
    return addr.version == c.net.version and addr in c.net


@fn("containsCIDR", ("cidr_contains_cidr_string", [CIDR, S], B, True), ("cidr_contains_cidr", [CIDR, CIDR], B, True), cost=_contains_cidr_cost)
def _contains_cidr(c: Any, other: Any) -> bool:
    net = _parse_cidr(other).net if is_str(other) else other.net
    return net.version == c.net.version and net.subnet_of(c.net)


@fn("prefixLength", ("cidr_prefix_length", [CIDR], I, True), cost=constant_cost)
def _prefix_length(c: Any) -> int:
    return c.net.prefixlen


@fn("masked", ("cidr_masked", [CIDR], CIDR, True), cost=constant_cost)
def _masked(c: Any) -> CIDRValue:
    return CIDRValue(c.net.network_address, c.net, str(c.net))
