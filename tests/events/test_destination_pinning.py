"""The address a webhook delivery connects to, and the host it still names."""

from __future__ import annotations

from finplat.events.destinations import Destination


def test_an_ipv6_address_is_bracketed_in_the_url_the_delivery_connects_to() -> None:
    destination = Destination(
        "https://hooks.example.com/in?x=1", "hooks.example.com", 443, ("::1",)
    )
    assert destination.via("2001:db8::7") == "https://[2001:db8::7]:443/in?x=1"


def test_the_host_header_names_the_host_and_only_a_non_default_port() -> None:
    default = Destination("https://hooks.example.com/in", "hooks.example.com", 443, ())
    other = Destination("http://hooks.example.com:8080/in", "hooks.example.com", 8080, ())
    assert (default.host_header, other.host_header) == (
        "hooks.example.com",
        "hooks.example.com:8080",
    )


def test_tls_is_verified_for_the_host_name_not_the_address() -> None:
    destination = Destination("https://hooks.example.com/in", "hooks.example.com", 443, ())
    assert destination.extensions == {"sni_hostname": "hooks.example.com"}
