"""Where webhooks may be sent: public addresses only (and loopback in development).

Checked when a URL is configured and again before every delivery, against every address the
host resolves to, so a name that later resolves to a private or metadata address is refused.
A delivery then connects to an address it checked (`Destination`, through
`events.delivery_client`), never to a second lookup of the name: a DNS answer that changes
between the check and the connection (DNS rebinding) cannot send a signed event to an internal
address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from finplat.errors import ValidationFailed

RESOLVE_TIMEOUT_SECONDS = 5.0
# An http(s) URL as RFC 3986 spells it, restricted to a DNS host name (the last label starts
# with a letter, so no IP literals), a port from 0 to 65535, and no user information.
_PCHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_TOP_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_PORT = r"(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
WEBHOOK_URL_PATTERN = (
    rf"^https?://(?:{_LABEL}\.)*{_TOP_LABEL}(?::{_PORT})?"
    rf"(?:/{_PCHAR}*)*(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?$"
)


class WebhookDestinationRefused(ValidationFailed):
    code = "WEBHOOK_URL_NOT_ALLOWED"
    message = "The webhook URL is not allowed."


def _refuse(reason: str) -> WebhookDestinationRefused:
    return WebhookDestinationRefused(
        f"The webhook URL is not allowed: {reason}",
        validation_errors={"WebhookUrl": [reason]},
    )


def address_allowed(address: str, *, allow_loopback: bool) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return allow_loopback
    return bool(ip.is_global) and not ip.is_multicast


def default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def parse_webhook_url(url: str) -> tuple[str, int]:
    """Syntax: http(s) URL with a DNS host name, no credentials. Returns (host, port)."""
    if not re.match(WEBHOOK_URL_PATTERN, url):
        raise _refuse("must be an http(s) URL with a host name, e.g. https://hooks.example.com/x")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _refuse("must be an absolute http or https URL")
    if parts.username or parts.password:
        raise _refuse("must not contain credentials")
    try:
        port = parts.port or default_port(parts.scheme)
    except ValueError:
        raise _refuse("has an invalid port") from None
    return parts.hostname, port


async def resolve(host: str, port: int) -> list[str] | None:
    """The addresses `host` resolves to, or None if it does not resolve (now)."""
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(
            loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), RESOLVE_TIMEOUT_SECONDS
        )
    except (OSError, TimeoutError):
        return None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class Destination:
    """A webhook URL with the addresses its host resolved to, all of them checked."""

    url: str
    host: str
    port: int
    addresses: tuple[str, ...]  # IPv4 first, in resolver order


async def vetted_destination(url: str, *, allow_loopback: bool) -> Destination:
    """The URL and the addresses a delivery may connect to: every address the host resolves
    to now must be allowed (as at configuration), and the name must resolve."""
    host, port = parse_webhook_url(url)
    addresses = await resolve(host, port)
    if not addresses:
        raise _refuse(f"the host {host!r} cannot be resolved")
    _refuse_non_public(host, addresses, allow_loopback=allow_loopback)
    ordered = sorted(addresses, key=lambda a: ":" in a)  # stable: resolver order within a family
    return Destination(url, host, port, tuple(ordered))


def _refuse_non_public(host: str, addresses: list[str], *, allow_loopback: bool) -> None:
    refused = [a for a in addresses if not address_allowed(a, allow_loopback=allow_loopback)]
    if refused:
        raise _refuse(f"{host} resolves to a non-public address ({refused[0]})")


async def check_webhook_url(url: str, *, allow_loopback: bool) -> str:
    """At configuration: refuse URLs that are malformed or resolve to private, link-local,
    metadata or other non-public addresses (loopback only when `allow_loopback`).

    A name that does not resolve yet is accepted (DNS may be set up later); before each
    delivery `vetted_destination` makes that a failed attempt.
    """
    host, port = parse_webhook_url(url)
    addresses = await resolve(host, port)
    if addresses is not None:
        _refuse_non_public(host, addresses, allow_loopback=allow_loopback)
    return url
