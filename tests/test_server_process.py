"""The real thing: `finplat serve` in its own process, a company made with the CLI, HTTP calls."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx

from tests.databases import scratch_database
from tests.factories import user_payload
from tests.processes import FINPLAT, environment, run_cli, served


async def test_served_process_answers_a_company_created_with_the_cli(tmp_path: Path) -> None:
    async with scratch_database("serve") as url:
        env = environment(url)
        async with served(env, cwd=tmp_path) as (base_url, _server):
            _, out, _ = await run_cli(env, "company", "create", "--name", "Served", "--json")
            created = json.loads(out)
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


async def test_cli_key_rotation_and_revocation(tmp_path: Path) -> None:
    async with scratch_database("cli") as url:
        env = environment(url)
        created = json.loads(
            (await run_cli(env, "company", "create", "--name", "Keys", "--json"))[1]
        )
        company = str(created["CompanyId"])
        rotated = json.loads(
            (await run_cli(env, "company", "rotate-key", "--company-id", company, "--json"))[1]
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
            )[1].splitlines()
        ]
        by_id = {row["ApiKeyId"]: row for row in listing}
        assert by_id[created["ApiKeyId"]]["RevokedAt"] is not None
        assert by_id[rotated["ApiKeyId"]]["RevokedAt"] is None
        assert created["ApiKey"] not in json.dumps(listing)


async def test_cli_refuses_an_invalid_webhook_url() -> None:
    async with scratch_database("cli") as url:
        env = environment(url)
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
        assert b"WEBHOOK_URL_NOT_ALLOWED" in err
