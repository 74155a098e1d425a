"""Kill the server (SIGKILL) during a burst of financial requests, restart it, retry every
unanswered request with its key: the ledger verifies, no acknowledged operation is missing and
none is duplicated."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from tests.databases import scratch_database
from tests.processes import environment, run_cli, served, stop

REQUESTS = 40
RETRY_ROUNDS = 40  # x 0.5 s: outlasts the 1 s lease of requests cut off by the crash


def amount_of(n: int) -> Decimal:
    return Decimal(n) + Decimal("0.25")


async def fund(client: httpx.AsyncClient, n: int) -> httpx.Response:
    return await client.post(
        "/api/v2/sandbox/company/funding",
        json={"Currency": "USD", "Amount": float(amount_of(n))},
        headers={"Idempotency-Key": f"burst-{n}"},
    )


@pytest.mark.long
async def test_sigkill_during_a_burst_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    async with scratch_database("crash") as url:
        env = environment(
            url,
            sandbox_latency_ms="100",
            idempotency_lease_seconds="1",
            run_background_jobs="false",
        )
        _, out, _ = await run_cli(env, "company", "create", "--name", "Crash", "--json")
        headers = {"x-api-key": json.loads(out)["ApiKey"]}

        acknowledged: dict[int, bytes] = {}
        async with (
            served(env, cwd=tmp_path) as (base_url, server),
            httpx.AsyncClient(base_url=base_url, headers=headers, timeout=10) as client,
        ):

            async def send(n: int) -> None:
                try:
                    response = await fund(client, n)
                except httpx.HTTPError:
                    return  # cut off by the crash: unanswered
                if response.status_code == 200:
                    acknowledged[n] = response.content

            burst = asyncio.gather(*(send(n) for n in range(1, REQUESTS + 1)))
            for _ in range(200):  # kill as soon as a few are acknowledged (at most 10 s)
                if len(acknowledged) >= 3:
                    break
                await asyncio.sleep(0.05)
            await stop(server, kill=True)
            await burst
        assert 0 < len(acknowledged) < REQUESTS, "the crash must fall inside the burst"

        async with (
            served(env, cwd=tmp_path) as (base_url, _server),
            httpx.AsyncClient(base_url=base_url, headers=headers, timeout=10) as client,
        ):
            final: dict[int, bytes] = {}
            for _ in range(RETRY_ROUNDS):
                for n in range(1, REQUESTS + 1):
                    if n in final:
                        continue
                    response = await fund(client, n)
                    assert response.status_code < 500 or response.status_code == 503, response.text
                    if response.status_code == 200:
                        final[n] = response.content
                if len(final) == REQUESTS:
                    break
                await asyncio.sleep(0.5)
            assert len(final) == REQUESTS
            for n, body in acknowledged.items():
                assert final[n] == body  # an acknowledged answer never changes
            balances = (await client.get("/api/v2/company/balances")).json()["Balances"]
            expected = sum(amount_of(n) for n in range(1, REQUESTS + 1))
            assert Decimal(str(balances[0]["Posted"])) == expected
            assert balances[0]["PendingCredits"] == 0
            events = (
                await client.get(
                    "/api/v2/events", params={"pageSize": 100, "type": "company.funded"}
                )
            ).json()["Items"]
            assert len(events) == REQUESTS

        code, report, _ = await run_cli(env, "ledger", "verify", check=False)
        assert code == 0, report
        assert "ledger OK" in report
