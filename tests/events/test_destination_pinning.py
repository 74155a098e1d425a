"""The network backend of webhook deliveries: a host name is connected only to the addresses
its delivery checked."""

from __future__ import annotations

import httpcore
import pytest

from finplat.events.delivery_client import PinnedNetworkBackend, connecting_to
from finplat.events.destinations import Destination


async def test_a_name_without_checked_addresses_is_not_connected() -> None:
    with pytest.raises(httpcore.ConnectError, match="no checked address"):
        await PinnedNetworkBackend().connect_tcp("localhost", 9)


async def test_a_name_other_than_the_checked_one_is_not_connected() -> None:
    checked = Destination("http://hooks.invalid:9/in", "hooks.invalid", 9, ("127.0.0.1",))
    async with connecting_to(checked):
        with pytest.raises(httpcore.ConnectError, match="no checked address"):
            await PinnedNetworkBackend().connect_tcp("localhost", 9)


async def test_the_checked_port_is_part_of_the_pin() -> None:
    checked = Destination("http://hooks.invalid:9/in", "hooks.invalid", 9, ("127.0.0.1",))
    async with connecting_to(checked):
        with pytest.raises(httpcore.ConnectError, match="no checked address"):
            await PinnedNetworkBackend().connect_tcp("hooks.invalid", 10)


async def test_unix_sockets_are_never_connected() -> None:
    with pytest.raises(httpcore.ConnectError):
        await PinnedNetworkBackend().connect_unix_socket("/tmp/finplat.sock")  # noqa: S108
