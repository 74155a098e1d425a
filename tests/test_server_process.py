"""The real thing: `finplat serve` in its own process, a company made with the CLI, HTTP calls."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path

import httpx

from tests.databases import scratch_database
from tests.factories import user_payload

FINPLAT = str(Path(sys.executable).parent / "finplat")
STARTUP_ATTEMPTS = 120  # x 0.25 s


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def run_cli(env: dict[str, str], *args: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        FINPLAT, *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def wait_until_healthy(base_url: str, server: asyncio.subprocess.Process) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=2) as client:
        for _ in range(STARTUP_ATTEMPTS):
            assert server.returncode is None, "server exited during start-up"
            try:
                if (await client.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.25)
    raise AssertionError("server did not become healthy")


async def test_served_process_answers_a_company_created_with_the_cli(tmp_path: Path) -> None:
    async with scratch_database("serve") as url:
        env = {**os.environ, "FINPLAT_DATABASE_URL": url}
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        server = await asyncio.create_subprocess_exec(
            FINPLAT,
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=tmp_path,
        )
        try:
            await wait_until_healthy(base_url, server)
            created = json.loads(
                await run_cli(env, "company", "create", "--name", "Served", "--json")
            )
            assert {"CompanyId", "ApiKey", "WebhookSecret"} <= created.keys()
            headers = {"x-api-key": created["ApiKey"]}
            async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=10) as client:
                assert (await client.get("/api/v2/tiers")).status_code == 200
                user = await client.post("/api/v2/users", json=user_payload())
                assert user.status_code == 201, user.text
                assert user.json()["CompanyId"] == created["CompanyId"]
                fetched = await client.get(f"/api/v2/users/{user.json()['Id']}")
                assert fetched.json() == user.json()
                assert fetched.headers["x-request-id"]
                anonymous = await client.get("/api/v2/tiers", headers={"x-api-key": "nope"})
                assert anonymous.status_code == 401
        finally:
            if server.returncode is None:
                server.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(server.wait(), timeout=15)
                except TimeoutError:
                    server.kill()
                    await server.wait()


async def test_cli_key_rotation_and_revocation(tmp_path: Path) -> None:
    async with scratch_database("cli") as url:
        env = {**os.environ, "FINPLAT_DATABASE_URL": url}
        created = json.loads(await run_cli(env, "company", "create", "--name", "Keys", "--json"))
        company = str(created["CompanyId"])
        rotated = json.loads(
            await run_cli(env, "company", "rotate-key", "--company-id", company, "--json")
        )
        assert rotated["ApiKey"] != created["ApiKey"]
        await run_cli(
            env,
            "company",
            "revoke-key",
            "--company-id",
            company,
            "--key-id",
            str(created["ApiKeyId"]),
        )
        listing = [
            json.loads(line)
            for line in (
                await run_cli(env, "company", "list-keys", "--company-id", company, "--json")
            ).splitlines()
        ]
        by_id = {row["ApiKeyId"]: row for row in listing}
        assert by_id[created["ApiKeyId"]]["RevokedAt"] is not None
        assert by_id[rotated["ApiKeyId"]]["RevokedAt"] is None
        assert created["ApiKey"] not in json.dumps(listing)


async def test_cli_refuses_an_invalid_webhook_url() -> None:
    async with scratch_database("cli") as url:
        env = {**os.environ, "FINPLAT_DATABASE_URL": url}
        proc = await asyncio.create_subprocess_exec(
            FINPLAT,
            "company",
            "create",
            "--name",
            "X",
            "--webhook-url",
            "ftp://nowhere",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await proc.communicate()
        assert proc.returncode == 1
        assert b"VALIDATION_ERROR" in err
