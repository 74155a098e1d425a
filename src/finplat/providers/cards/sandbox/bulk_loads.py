"""The sandbox card programme's bulk loads: every order in one statement (PostgreSQL).

An order is made here only when `load` would simply make it: the card is the company's,
exposed, neither pending nor cancelled, the key unused and no fault armed on `load` for the
company. Its card row is locked (in card order, named by the array of card ids: a join with
the orders under FOR UPDATE would make PostgreSQL copy each order's row), its balance raised,
and the movement and the `LOAD` transaction recorded, as `SandboxCardProgram.load` does one by
one. Anything else is left to `load` (None). A key used concurrently fails the statement on its
unique index: then nothing is made and every order is left to `load`.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
from asyncpg.exceptions import UniqueViolationError

from finplat.db import prepared
from finplat.kit.clock import utcnow
from finplat.kit.random_tokens import hex_tokens
from finplat.providers.cards.port import CardMovement, LoadOrder

_LOAD = """
WITH u AS (
  SELECT * FROM unnest($3::int[], $4::text[], $5::bigint[], $6::text[], $7::bigint[], $8::text[],
                       $9::text[]) AS u(ord, ref, cid, skey, amount, mid, txid)
), c AS (
  SELECT c.id, c.card_id, c.company_id, c.currency FROM sandbox_cardprov_cards c
  WHERE c.card_id = ANY ($4::text[])
    AND c.provider = $1 AND NOT c.hidden AND c.status NOT IN ('CANCELLED', 'PENDING')
    AND NOT EXISTS (SELECT 1 FROM sandbox_faults f WHERE f.company_id = c.company_id
                    AND f.provider = $1 AND f.operation = 'load' AND f.remaining > 0)
  ORDER BY c.id
  FOR UPDATE OF c
), b AS (
  UPDATE sandbox_cardprov_cards s SET balance_minor = s.balance_minor + u.amount, updated_at = $2
  FROM u JOIN c ON c.card_id = u.ref AND c.company_id = u.cid
  WHERE s.id = c.id
    AND NOT EXISTS (SELECT 1 FROM sandbox_cardprov_movements m WHERE m.idempotency_key = u.skey)
  RETURNING s.card_id, s.balance_minor
), m AS (
  INSERT INTO sandbox_cardprov_movements (company_id, provider, movement_id, idempotency_key,
      card_id, amount_minor, balance_minor, status, created_at)
  SELECT u.cid, $1, u.mid, u.skey, u.ref, u.amount, b.balance_minor, 'COMPLETED', $2
  FROM u JOIN b ON b.card_id = u.ref
), t AS (
  INSERT INTO sandbox_cardprov_transactions (company_id, provider, transaction_id, card_id,
      type, status, amount_minor, currency, merchant, decline_reason, timestamp, created_at)
  SELECT u.cid, $1, u.txid, u.ref, 'LOAD', 'SETTLED', u.amount, c.currency, NULL, NULL, $10, $2
  FROM u JOIN b ON b.card_id = u.ref JOIN c ON c.card_id = u.ref
)
SELECT u.ord, u.mid, b.balance_minor FROM u JOIN b ON b.card_id = u.ref
"""


def _ids(prefix: str, count: int) -> list[str]:
    """`count` random ids of 96 bits, as `load` makes them (one draw for them all)."""
    return [prefix + token for token in hex_tokens(count, 12)]


def scoped_key(provider: str, company_id: int, key: str) -> str:
    """A caller's key as the provider stores it: one namespace per provider and company."""
    return f"{provider}:{company_id}:{key}"


async def make(
    pg: asyncpg.Connection, *, provider: str, orders: Sequence[LoadOrder]
) -> list[CardMovement | None]:
    """Make the orders that can be made in bulk (see the module docstring)."""
    chosen: list[int] = []
    cards: set[str] = set()
    for index, order in enumerate(orders):
        # One order per card: a second one's balance would be computed from the first's.
        if order.amount_minor > 0 and order.card_id not in cards:
            cards.add(order.card_id)
            chosen.append(index)
    made: list[CardMovement | None] = [None] * len(orders)
    if not chosen:
        return made
    now = utcnow()
    picked = [orders[i] for i in chosen]
    try:
        rows = await prepared.fetch(
            pg,
            _LOAD,
            provider,
            now,
            chosen,
            [o.card_id for o in picked],
            [o.company_id for o in picked],
            [scoped_key(provider, o.company_id, o.idempotency_key) for o in picked],
            [o.amount_minor for o in picked],
            _ids(f"{provider}_mov_", len(picked)),
            _ids(f"{provider}_txn_", len(picked)),
            now.isoformat(),
        )
    except UniqueViolationError:
        return made  # a key made concurrently: `load` answers each order by its key
    for index, movement_id, balance in rows:
        made[index] = CardMovement(movement_id, "COMPLETED", orders[index].amount_minor, balance)
    return made
