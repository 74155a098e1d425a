"""`finplat partner-sim` as a partner runs it: a real HTTP server in its own process that
checks finplat's key and signature and stops by itself."""

from __future__ import annotations

import asyncio
import os

import httpx

from finplat.kit.signing import service_signature
from tests.processes import FINPLAT, free_port

SIM_KEY = "pk_test_cli_sim_01"  # a test double's key
SIM_SECRET = "whsec_" + "A" * 43 + "="  # a test double's secret


async def test_partner_sim_serves_signed_balance_reads_and_stops_by_itself() -> None:
    port = free_port()
    sim = await asyncio.create_subprocess_exec(
        FINPLAT,
        "partner-sim",
        "--port",
        str(port),
        "--api-key",
        SIM_KEY,
        "--default-balance",
        "250",
        "--stop-after",
        "8",
        env={**os.environ, "FINPLAT_PARTNER_SIM_WEBHOOK_SECRET": SIM_SECRET},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        signed = {"X-API-Key": SIM_KEY, "X-Service-Signature": service_signature(SIM_SECRET, b"")}
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=2) as client:
            for _ in range(80):
                try:
                    answer = await client.get("/balances/u-1", headers=signed)
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.25)
            else:
                raise AssertionError("partner-sim did not start")
            assert answer.status_code == 200
            assert answer.json()["Balances"][0]["Available"] == 250
            unsigned = await client.get("/balances/u-1", headers={"X-API-Key": SIM_KEY})
            assert unsigned.status_code == 401
            wrong_key = await client.get("/balances/u-1", headers=signed | {"X-API-Key": "x"})
            assert wrong_key.status_code == 401
        assert await asyncio.wait_for(sim.wait(), timeout=20) == 0  # it stopped by itself
    finally:
        if sim.returncode is None:
            sim.terminate()
        await asyncio.wait_for(sim.wait(), timeout=30)
