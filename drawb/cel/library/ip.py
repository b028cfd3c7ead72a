"""The Kubernetes IP library: ip(), isIP, ip.isCanonical, family and the address class tests."""

from __future__ import annotations

import ipaddress
from typing import Any

from drawb.cel.decls import B, CIDR, I, IP, S
from drawb.cel.library._registry import constant_cost, fn, string_arg_cost
from drawb.cel.ranges import ONE, STRING_TRAVERSAL
from drawb.cel.values import CelError


def _ip_cost(c, overload, target, args):
    if overload == "cidr_ip":
        return ONE, None
    return string_arg_cost(c, overload, target, args)


def _is_canonical_cost(c, overload, target, args):
    if not args:
        return None
    return c.size_of(args[0]).factor(2 * STRING_TRAVERSAL), None


class IPValue:
    cel_type_name = "net.IP"

    def __init__(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
        self.addr = addr


class CIDRValue:
    cel_type_name = "net.CIDR"

    def __init__(self, ip: Any, net: Any, text: str) -> None:
        self.ip, self.net, self.text = ip, net, text


def parse_ip(s: str) -> IPValue:
    if "%" in s:
        raise CelError(f"IP address with zone value is not allowed: {s}")
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        raise CelError(f"IP Address {s!r} parse error during conversion from string: ParseAddr({s!r}): unable to parse IP") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CelError("IPv4-mapped IPv6 address is not allowed")
    return IPValue(addr)


@fn("ip", ("string_to_ip", [S], IP, False), ("cidr_ip", [CIDR], IP, True), cost=_ip_cost)
def _ip(v: Any) -> IPValue:
    if isinstance(v, CIDRValue):
        return IPValue(v.ip)
    return parse_ip(v)


@fn("isIP", ("is_ip", [S], B, False), cost=string_arg_cost)
def _is_ip(s: Any) -> bool:
    try:
        parse_ip(s)
    except CelError:
        return False
    return True


@fn("ip.isCanonical", ("ip_is_canonical", [S], B, False), cost=_is_canonical_cost)
def _ip_is_canonical(s: Any) -> bool:
    return str(parse_ip(s).addr) == s


@fn("family", ("ip_family", [IP], I, True), cost=constant_cost)
def _family(v: Any) -> int:
    return v.addr.version


@fn("isUnspecified", ("ip_is_unspecified", [IP], B, True), cost=constant_cost)
def _is_unspecified(v: Any) -> bool:
    return v.addr.is_unspecified


@fn("isLoopback", ("ip_is_loopback", [IP], B, True), cost=constant_cost)
def _is_loopback(v: Any) -> bool:
    return v.addr.is_loopback


@fn("isLinkLocalMulticast", ("ip_is_link_local_multicast", [IP], B, True), cost=constant_cost)
def _is_link_local_multicast(v: Any) -> bool:
    a = v.addr
    if a.version == 4:
        return a in ipaddress.ip_network("224.0.0.0/24")
    return a.is_multicast and (a.packed[1] & 0x0F) == 2


@fn("isLinkLocalUnicast", ("ip_is_link_local_unicast", [IP], B, True), cost=constant_cost)
def _is_link_local_unicast(v: Any) -> bool:
    a = v.addr
    if a.version == 4:
        return a in ipaddress.ip_network("169.254.0.0/16")
    return a in ipaddress.ip_network("fe80::/10")


@fn("isGlobalUnicast", ("ip_is_global_unicast", [IP], B, True), cost=constant_cost)
def _is_global_unicast(v: Any) -> bool:
    a = v.addr
    if a.version == 4 and a == ipaddress.ip_address("255.255.255.255"):
        return False
    return not (a.is_unspecified or a.is_loopback or a.is_multicast or _is_link_local_unicast(v))
