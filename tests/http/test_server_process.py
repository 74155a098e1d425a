"""The real thing: `finplat serve` in its own process, a company made with the CLI, HTTP calls."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from finplat.companies.models import WEBHOOK_SECRET_PURPOSE
from finplat.db.migrate import head_revision
from finplat.sealing.keyring import SecretKeyring, new_key
from tests.databases import scratch_database
from tests.factories import user_payload
from tests.processes import FINPLAT, environment, run_cli, served
from tests.sensitive_data import SCANNER

SECRET_KEY_ENV = "FINPLAT_SECRET_KEY"


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


async def test_a_company_created_with_the_cli_has_its_secret_sealed_with_the_configured_key() -> (
    None
):
    key = SCANNER.watch_key(new_key())
    async with scratch_database("cli") as url:
        env = environment(url, secret_key=key)
        created = json.loads(
            (await run_cli(env, "company", "create", "--name", "Sealed", "--json"))[1]
        )
        engine = create_async_engine(url)
        try:
            async with engine.connect() as connection:
                stored = (
                    await connection.execute(text("SELECT webhook_secret FROM companies"))
                ).scalar_one()
        finally:
            await engine.dispose()
    assert created["WebhookSecret"] not in stored
    opened = SecretKeyring.from_config(key).open(stored, purpose=WEBHOOK_SECRET_PURPOSE)
    assert opened == created["WebhookSecret"]


async def test_without_the_sandbox_the_cli_refuses_to_start_without_a_secret_key() -> None:
    async with scratch_database("cli") as url:
        env = {k: v for k, v in environment(url, sandbox="false").items() if k != SECRET_KEY_ENV}
        code, _, err = await run_cli(env, "migrate", check=False)
    assert code == 2
    assert err.startswith("error: FINPLAT_SECRET_KEY is required when the sandbox is off")
    assert "Traceback" not in err


async def test_migrate_names_each_migration_it_applies_then_says_it_is_up_to_date() -> None:
    async with scratch_database("cli") as url:
        env = environment(url)
        first = (await run_cli(env, "migrate"))[1].splitlines()
        again = (await run_cli(env, "migrate"))[1].splitlines()
    head = head_revision()
    assert first[0].startswith("applied 0001: ")
    assert first[-2].startswith(f"applied {head}: ")
    assert first[-1] == f"database is up to date (revision {head})"
    assert again == [f"database is already up to date (revision {head})"]


async def test_list_keys_prints_a_header_and_a_dash_for_a_key_never_revoked() -> None:
    async with scratch_database("cli") as url:
        env = environment(url)
        created = json.loads(
            (await run_cli(env, "company", "create", "--name", "Keys", "--json"))[1]
        )
        company = str(created["CompanyId"])
        await run_cli(env, "company", "rotate-key", "--company-id", company)
        await run_cli(env, "company", "revoke-key", "--company-id", company, "--key-id", "1")
        lines = (await run_cli(env, "company", "list-keys", "--company-id", company))[1]
    header, revoked, active = (line.split() for line in lines.splitlines())
    assert header == ["KEY", "ID", "PREFIX", "CREATED", "REVOKED"]
    assert (revoked[0], active[0]) == ("1", "2")
    assert revoked[3] != "-"
    assert active[3] == "-"
    assert "None" not in lines


async def test_demo_prints_the_webhook_secret_again_and_the_current_one_after_a_rotation(
    tmp_path: Path,
) -> None:
    async with scratch_database("demo") as url:
        env = environment(url)
        first = (await run_cli(env, "demo", cwd=tmp_path))[1]
        key, secret = (_printed(first, label) for label in ("API key", "Webhook secret"))
        assert secret.startswith("whsec_")
        assert _printed((await run_cli(env, "demo", cwd=tmp_path))[1], "Webhook secret") == secret
        async with (
            served(env, cwd=tmp_path) as (base_url, _server),
            httpx.AsyncClient(base_url=base_url, headers={"x-api-key": key}) as client,
        ):
            rotated = await client.put(
                "/api/v2/company/configuration", json={"RotateWebhookSecret": True}
            )
        after = (await run_cli(env, "demo", cwd=tmp_path))[1]
    assert _printed(after, "API key") == key
    assert _printed(after, "Webhook secret") == rotated.json()["WebhookSecret"] != secret


def _printed(output: str, label: str) -> str:
    match = re.search(rf"^  {label}: +(\S+)$", output, flags=re.MULTILINE)
    assert match is not None, output
    return match.group(1)
