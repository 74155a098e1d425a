"""Schema-driven fuzzing of the whole API with schemathesis' default checks (all of them, in
positive and negative mode): zero failures. `make fuzz` runs the long profile (many more
examples and stateful sequences) and prints the seed so a failure replays with
FINPLAT_FUZZ_SEED=<seed>."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi import FastAPI, Security
from fastapi.routing import APIRouter
from pydantic import BaseModel

from finplat.http.routing import CurrentPrincipal, api_key_scheme, api_router
from tests.banking import steps as banking_steps
from tests.business import steps as business_steps
from tests.cards.funding import steps as card_steps
from tests.factories import user_payload
from tests.fuzz.runner import QUICK, profile, run_schemathesis, seed
from tests.isolated import Isolated, isolated
from tests.local_server import LocalServer

# Fuzzed apart from the rest, each because another operation makes it fail on purpose: the
# faults the fuzzer arms make later provider calls fail, and a partner-hosted configuration
# the fuzzer sets names a partner that does not exist, whose balance read is then 503.
APART = r"^(?:/api/v2/sandbox/faults|/api/v2/users/\{userId\}/partner-balances)$"


@dataclass
class Target:
    env: Isolated
    base_url: str


async def seed_data(env: Isolated) -> None:
    """Data the operations can find: users of both kinds, balances, events, a delivery."""
    client = env.client
    assert (
        await client.put(
            "/api/v2/company/configuration", json={"WebhookUrl": "http://localhost:9/hooks"}
        )
    ).status_code == 200
    for account_type in ("personal", "business", "personal"):
        assert (
            await client.post("/api/v2/users", json=user_payload(AccountType=account_type))
        ).status_code == 201
    for currency, amount in (("USD", 5000), ("USDC", 12.5)):
        assert (
            await client.post(
                "/api/v2/sandbox/company/funding", json={"Currency": currency, "Amount": amount}
            )
        ).status_code == 200
    assert (await client.post("/api/v2/webhooks/test")).status_code == 202
    # A verified business user with a draft application and a person: the business
    # onboarding operations get past their eligibility checks.
    await business_steps.seed_person(client)
    # A user with an open bank account and money in it: the banking operations get past
    # "unknown user" (the identifiers the service issues are beyond guessing).
    await banking_steps.funded_user(client, "1000.00", "EUR")
    # An active card holding money: the card operations reach their controls and funding.
    card = await card_steps.active_card(client, master=0)
    assert (await card_steps.topup(client, card, 100)).status_code == 200


@pytest.fixture
async def target() -> AsyncIterator[Target]:
    # The fuzzer's huge invalid bodies should meet validation (400), not the body-size limit
    # (413, tested on its own in tests/test_limits.py); so should its request rate and its
    # requests without a key (the throttle has tests of its own: tests/auth).
    # Enabled for MOR: the fuzzer reaches the MOR routes' rules, not only their gate.
    async with isolated(
        "fuzz",
        mor=True,
        run_background_jobs=False,
        rate_limit="100000/second",
        auth_failure_limit="100000/minute",
        max_body_bytes=16 << 20,
    ) as env:
        await seed_data(env)
        async with LocalServer(env.app) as server:
            yield Target(env, server.base_url)


# The quick profile fuzzes each operation on its own (no stateful phase), so its operations
# are split into shards that pytest-xdist workers run side by side (eight: fuzzing an operation
# with a large body, such as a KYB application, costs tens of times a small one, and finer shards
# keep any one worker's share short); the long profile's stateful sequences need every operation
# in one run.
SHARDS = 1 if profile().stateful else 8


def shard_scope(document: dict[str, Any], shard: int) -> tuple[str, ...]:
    """The schemathesis arguments that keep one shard's operations (every `SHARDS`th path of
    the document, the operations fuzzed apart left out)."""
    if SHARDS == 1:
        return ("--exclude-path-regex", APART)
    paths = sorted(p for p in document["paths"] if not re.fullmatch(APART, p))
    mine = paths[shard::SHARDS]
    return ("--include-path-regex", "^(?:" + "|".join(re.escape(p) for p in mine) + ")$")


@pytest.mark.long
@pytest.mark.parametrize("shard", range(SHARDS), ids=lambda n: f"shard-{n}")
async def test_schemathesis_finds_nothing_with_default_checks(target: Target, shard: int) -> None:
    chosen = profile()
    seed_ = seed(chosen)
    print(f"schemathesis profile={chosen.name} seed={seed_} (replay: FINPLAT_FUZZ_SEED={seed_})")
    # The operations fuzzed apart (`APART`) make others fail on purpose (that is the endpoint
    # doing its job), which would read as those operations failing on valid input. They link
    # to nothing, and schemathesis reports a stateful phase without links as an error: their
    # run leaves the phase out.
    runs = [(chosen, shard_scope(target.env.app.openapi(), shard))]
    if shard == 0:
        runs.append((chosen.without("stateful"), ("--include-path-regex", APART)))
    for phases, scope in runs:
        outcome = await run_schemathesis(
            target.base_url, target.env.api_key, chosen=phases, seed_=seed_, extra=scope
        )
        assert outcome.returncode == 0, outcome.output[-20000:]
        assert "No issues found" in outcome.output or " passed" in outcome.output, outcome.output[
            -3000:
        ]


class Strict(BaseModel):
    Count: int


def mount_faulty_routes(app: FastAPI) -> None:
    """Three classic mistakes the fuzzer must catch."""
    guarded = api_router(tags=["Faulty"])

    @guarded.get("/api/v2/test-faults/crash", response_model=Strict)
    async def crash(principal: CurrentPrincipal) -> Strict:
        raise RuntimeError("forgot to handle this")

    @guarded.get("/api/v2/test-faults/wrong-shape", response_model=None)
    async def wrong_shape(principal: CurrentPrincipal) -> dict[str, str]:
        return {"Count": "not a number"}

    # Declares the API key in the document but never checks it.
    unguarded = APIRouter(tags=["Faulty"], dependencies=[Security(api_key_scheme)])

    @unguarded.get("/api/v2/test-faults/no-auth", response_model=Strict)
    async def no_auth() -> Strict:
        return Strict(Count=1)

    app.include_router(guarded)
    app.include_router(unguarded)
    original = app.openapi

    def document() -> dict:  # type: ignore[type-arg]
        schema = original()
        wrong = schema["paths"]["/api/v2/test-faults/wrong-shape"]["get"]["responses"]["200"]
        wrong["content"]["application/json"]["schema"] = {"$ref": "#/components/schemas/Strict"}
        return schema

    app.openapi = document  # type: ignore[method-assign]


async def test_schemathesis_fails_on_deliberately_broken_endpoints() -> None:
    async with isolated("fuzz-broken", run_background_jobs=False) as env:
        mount_faulty_routes(env.app)
        async with LocalServer(env.app) as server:
            outcome = await run_schemathesis(
                server.base_url,
                env.api_key,
                chosen=QUICK,
                seed_=1,
                extra=("--include-path-regex", "^/api/v2/test-faults/"),
            )
    assert outcome.returncode != 0
    output = outcome.output
    assert "GET /api/v2/test-faults/crash" in output
    assert "Server error" in output
    assert "GET /api/v2/test-faults/wrong-shape" in output
    assert "GET /api/v2/test-faults/no-auth" in output
