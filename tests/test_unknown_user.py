"""One rule for a user id that names nobody, generated from the document: wherever a user id
appears (path, query or body), a well-formed id of no user of the company is 404
`USER_NOT_FOUND`, even when the operation's other identifiers are real; a malformed one is 400.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.http.rate_limit import ApiKeyRateLimiter
from tests.conftest import TenantFactory
from tests.test_tenancy_matrix import (
    IDENTIFIERS,
    MISSING_INT,
    Call,
    operations_with_identifiers,
    request_for,
    seed,
)

# The names a user id goes by in the document, and the matrix's names for which user it is.
USER_IDS = {"userId", "UserId", "businessUserId", "bankingUserId", "cardUserId", "cryptoUserId"}


@pytest.fixture(autouse=True)
def _unthrottled(app: FastAPI) -> None:
    app.state.rate_limiter = ApiKeyRateLimiter("100000/second")


def takes_a_user(call: Call) -> bool:
    return bool(USER_IDS & {*call.path_params, *call.query, *call.body_ids})


def answer(response: httpx.Response) -> tuple[int, Any]:
    return response.status_code, response.json().get("Code") if response.content else None


async def test_an_unknown_user_is_404_user_not_found_wherever_the_id_appears(
    make_tenant: TenantFactory, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    tenant = await make_tenant(mor=True)  # the MOR routes' user ids too
    seeded = await seed(tenant, session_factory)
    document = (await tenant.client.get("/openapi.json")).json()
    calls = [c for c in operations_with_identifiers(document) if takes_a_user(c)]
    assert len(calls) >= 50  # the document really was walked
    answers = {}
    for call in calls:
        request = request_for(
            call, lambda n: MISSING_INT if n in USER_IDS else IDENTIFIERS[n][0](seeded)
        )
        answers[f"{call.method} {call.path}"] = answer(await tenant.client.request(**request))
    assert {op: a for op, a in answers.items() if a != (404, "USER_NOT_FOUND")} == {}


@pytest.mark.parametrize("malformed", ["0", "-1", "abc", "1.0"])
async def test_a_malformed_user_id_is_400(api: httpx.AsyncClient, malformed: str) -> None:
    response = await api.get("/api/v2/cards", params={"userId": malformed})
    assert answer(response) == (400, "VALIDATION_ERROR")
    assert list(response.json()["ValidationErrors"]) == ["UserId"]
