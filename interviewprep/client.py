"""Where a request comes from: the one rule for every limit per client address (login failures,
registrations, throttles) and for /metrics' "on the host"."""

from __future__ import annotations

import functools
import ipaddress

from django.conf import settings
from django.http import HttpRequest

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _parse(raw: str | None) -> Address | None:
    try:
        address = ipaddress.ip_address((raw or "").strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@functools.cache
def _networks(trusted: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(network) for network in trusted)


def _trusted(address: Address) -> bool:
    return any(address in network for network in _networks(tuple(settings.TRUSTED_PROXIES)))


def client_address(request: HttpRequest) -> str | None:
    """The client's address; None when it cannot be known.

    The peer (REMOTE_ADDR) is the client, unless the app is BEHIND_PROXY and the peer is one of
    TRUSTED_PROXIES: then it is the right-most X-Forwarded-For address that is no trusted proxy,
    since everything left of the last hop a trusted proxy wrote is the client's own to choose. A
    trusted proxy that forwards no address, or a hop that is not one, leaves the client unknown:
    guessing the proxy (the loopback) would make an outsider "the host", and a made-up value would
    be a free new identity per request."""
    peer = _parse(request.META.get("REMOTE_ADDR"))
    if peer is None or not settings.BEHIND_PROXY or not _trusted(peer):
        return None if peer is None else str(peer)
    hops = [_parse(hop) for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    for hop in reversed(hops):
        if hop is None:
            return None
        if not _trusted(hop):
            return str(hop)
    return str(hops[0])  # every hop is a trusted proxy: the request started on one of them


def client_on_host(request: HttpRequest) -> bool:
    """Whether the client is this machine itself (the loopback), by `client_address`."""
    address = _parse(client_address(request))
    return address is not None and address.is_loopback
