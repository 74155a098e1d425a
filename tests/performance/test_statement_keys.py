"""The writes of a money request are keyed for SQLAlchemy's compiled cache once, not at every
request.

SQLAlchemy keeps a statement's cache key on the statement object, so a statement built once is
keyed once; but the ORM annotates a copy of an INSERT, UPDATE or DELETE of a mapped class at
every execution, and that copy is keyed again (docs/performance.md). The writes built once on
the money paths (the sandbox card's balance moved, the callbacks claimed and released, the
purchase recorded) therefore work on their tables; the ORM's own flushes key theirs once.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.sql import cache_key
from sqlalchemy.sql.dml import UpdateBase

from tests.cards.funding.steps import active_card, purchase, route_only, topup, unload


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Each write keyed for the cache while the test runs, by table."""
    counted: Counter[str] = Counter()
    original = cache_key.HasCacheKey._generate_cache_key

    def generate(statement: Any) -> Any:
        table = getattr(statement, "table", None)
        name = getattr(table, "name", "")
        if isinstance(statement, UpdateBase):
            counted[name] += 1
        return original(statement)

    monkeypatch.setattr(cache_key.HasCacheKey, "_generate_cache_key", generate)
    return counted


async def test_the_writes_of_a_purchase_and_a_funding_are_keyed_once(
    api: httpx.AsyncClient, app: FastAPI, request: pytest.FixtureRequest
) -> None:
    with route_only(app):  # top-ups through the route: the sandbox moves the card's balance
        card = await active_card(api)
        # Once each, so every statement on the way has been keyed (the first request keys them).
        assert (await topup(api, card, 100, key="warm-topup")).status_code == 200
        assert (await unload(api, card, 1, key="warm-unload")).status_code == 200
        await purchase(api, card, 1)
        keyed: Counter[str] = request.getfixturevalue("keyed")  # counting from here
        assert (await topup(api, card, 10, key="again-topup")).status_code == 200
        assert (await unload(api, card, 1, key="again-unload")).status_code == 200
        await purchase(api, card, 2)
    assert keyed == Counter(), f"writes keyed again: {dict(keyed)}"
