"""The SQL of batched card top-ups (PostgreSQL): a batch's work in a few statements.

Each statement takes the batch as arrays (`unnest`) and writes exactly the rows a top-up
writes one by one (`finplat.cards.funding.topup`): the idempotency record, the pending ledger
transfer with its entries and balance changes, the card funding, then the posting. Row locks
follow the platform's order: idempotency key, card (by id), ledger balances (single-shard
accounts first, then sharded ones, each by account and shard).

The statements name the platform's constants (statuses, layers, the request scope) in their
text; every value that comes with a request is a bound parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from finplat.cards.funding.service import FundingKind, FundingStatus
from finplat.cards.status import CardStatus
from finplat.db import prepared
from finplat.idempotency.service import FINISHED, REQUEST_SCOPE
from finplat.ledger.core import Layer, TransferKind, TransferStatus
from finplat.ledger.service import CompanyAccount

TOPUP_PATH = "/api/v2/cards/topup"
TOPUP_CODE = "card.topup"

_READ = f"""
WITH u AS (
  SELECT * FROM unnest($1::int[], $2::bigint[], $3::bigint[], $4::bigint[])
    AS u(ord, card_id, company_id, api_key_id)
), accounts AS (
  SELECT co.company_id, m.id AS master_id, r.id AS revenue_id,
         (SELECT array_agg(b.posted - b.pending_debits ORDER BY b.shard)
          FROM ledger_balances b WHERE b.account_id = m.id) AS available
  FROM (SELECT DISTINCT u.company_id FROM u) co
  LEFT JOIN ledger_accounts m ON m.company_id = co.company_id
    AND m.code = '{CompanyAccount.MASTER.value}' AND m.owner_type = 'company'
    AND m.owner_id = co.company_id::text AND m.currency = $5
  LEFT JOIN ledger_accounts r ON r.company_id = co.company_id
    AND r.code = '{CompanyAccount.FEE_REVENUE.value}' AND r.owner_type = 'company'
    AND r.owner_id = co.company_id::text AND r.currency = $5
)
SELECT u.ord, c.status, c.currency, c.provider, c.provider_card_id, c.outstanding_fee_minor,
       c.ledger_account_id, s.topup_fee_percent, s.topup_fixed_fee_minor,
       dc.percent_off AS discount_percent_off, dc.valid_from AS discount_valid_from,
       dc.valid_until AS discount_valid_until,
       a.master_id, a.revenue_id, a.available,
       EXISTS (SELECT 1 FROM api_keys k WHERE k.id = u.api_key_id
               AND k.company_id = u.company_id AND k.revoked_at IS NULL) AS key_valid
FROM u
JOIN cards c ON c.id = u.card_id AND c.company_id = u.company_id
JOIN accounts a ON a.company_id = u.company_id
LEFT JOIN card_fee_schedules s ON s.company_id = c.company_id AND s.tier_id = c.tier_id
LEFT JOIN card_discounts d ON d.card_id = c.id AND d.company_id = c.company_id
LEFT JOIN card_discount_codes dc ON dc.id = d.discount_code_id AND dc.company_id = c.company_id
"""  # noqa: S608

# The balance rows of `d` (account_id, shard), locked once every other row of the statement is
# written (`written`), in the order every ledger posting takes (`ledger.service`): single-shard
# accounts first, then sharded ones, each by account and shard.
_LOCK_BALANCES = """
  SELECT b.account_id, b.shard FROM ledger_balances b
  JOIN d ON b.account_id = d.account_id AND b.shard = d.shard
  JOIN ledger_accounts a ON a.id = b.account_id
  CROSS JOIN written
  ORDER BY a.shard_count > 1, b.account_id, b.shard
  FOR UPDATE OF b
"""

# One statement, so that nothing is held between round trips: the keys are claimed first (the
# order every request takes its locks in), then the cards are locked and checked again, then
# the rows are written, and the ledger balances are locked and changed last (the company's
# master account row is the one every top-up of the company waits for). A card that no longer
# accepts money once locked stops the statement (`finplat_assert`): nothing is written and the
# batch reads again. Rows to lock are named by an array rather than joined with the batch's
# rows: under FOR UPDATE, PostgreSQL keeps a whole copy of every joined row for its re-checks.
CARD_CHANGED = "a card changed while its batch was planned"
_RESERVE = f"""
WITH asked AS (
  SELECT * FROM unnest($2::int[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[],
                       $7::text[], $8::text[], $9::bigint[], $10::int[], $11::bigint[],
                       $12::bigint[], $13::int[], $14::text[], $15::text[], $16::text[])
    AS u(ord, card, cid, amount, fee, pkey, details, macc, mshard, cacc, racc, rshard, ikey, fp,
         tok)
), u AS (
  SELECT asked.*, nextval('card_fundings_id_seq') AS fid,
         nextval('ledger_transfers_id_seq') AS tid
  FROM asked
), claimed AS (
  INSERT INTO idempotency_keys (company_id, scope, key, fingerprint, request_method,
      request_path, recovery_point, state, lock_token, locked_until, created_at)
  SELECT u.cid, '{REQUEST_SCOPE}', u.ikey, u.fp, 'POST', '{TOPUP_PATH}', $17,
         json_build_object('funding_id', u.fid), u.tok, $18, $1
  FROM u
  ON CONFLICT DO NOTHING
  RETURNING company_id, key
), c AS (
  SELECT c.id FROM cards c
  WHERE c.id = ANY (ARRAY(SELECT u.card FROM u
                          JOIN claimed k ON k.company_id = u.cid AND k.key = u.ikey))
    AND c.status <> '{CardStatus.CANCELLED.value}' AND c.outstanding_fee_minor = 0
  ORDER BY c.id
  FOR UPDATE
), g AS (
  SELECT u.* FROM u JOIN claimed k ON k.company_id = u.cid AND k.key = u.ikey
  WHERE finplat_assert((SELECT count(*) FROM c) = (SELECT count(*) FROM claimed),
                       '{CARD_CHANGED}')
), t AS (
  INSERT INTO ledger_transfers (id, kind, status, pending_id, code, reference, details,
      expires_at, created_at, company_id)
  SELECT g.tid, '{TransferKind.PENDING.value}', '{TransferStatus.PENDING.value}', NULL,
         '{TOPUP_CODE}', g.pkey, g.details::json, NULL, $1, g.cid
  FROM g
  RETURNING 1
), legs AS (
  SELECT g.tid, l.acc, l.shard, l.amount
  FROM g CROSS JOIN LATERAL (VALUES (g.macc, g.mshard, -g.amount),
                                    (g.cacc, 0, g.amount - g.fee),
                                    (g.racc, g.rshard, g.fee)) AS l(acc, shard, amount)
  WHERE l.amount <> 0
), e AS (
  INSERT INTO ledger_entries (transfer_id, account_id, shard, layer, amount, currency)
  SELECT legs.tid, legs.acc, legs.shard,
         CASE WHEN legs.amount < 0 THEN '{Layer.PENDING_DEBIT.value}'
              ELSE '{Layer.PENDING_CREDIT.value}' END,
         legs.amount, $19
  FROM legs
  RETURNING 1
), f AS (
  INSERT INTO card_fundings (id, company_id, card_id, kind, status, currency, amount_minor,
      fee_minor, fee_paid_minor, provider_key, ledger_pending_id, trigger, provider_call_until,
      created_at, updated_at)
  SELECT g.fid, g.cid, g.card, '{FundingKind.TOPUP.value}', '{FundingStatus.PENDING.value}', $19,
         g.amount, g.fee, 0, g.pkey, g.tid, NULL, $20, $1, $1
  FROM g
  RETURNING 1
), written AS (
  SELECT (SELECT count(*) FROM t) + (SELECT count(*) FROM e) + (SELECT count(*) FROM f) AS rows
), d AS (
  SELECT legs.acc AS account_id, legs.shard,
         sum(CASE WHEN legs.amount < 0 THEN -legs.amount ELSE 0 END) AS debits,
         sum(CASE WHEN legs.amount > 0 THEN legs.amount ELSE 0 END) AS credits
  FROM legs GROUP BY legs.acc, legs.shard
), locked AS ({_LOCK_BALANCES}), b AS (
  UPDATE ledger_balances b SET pending_debits = b.pending_debits + d.debits,
      pending_credits = b.pending_credits + d.credits
  FROM d
  WHERE b.account_id = d.account_id AND b.shard = d.shard
    AND EXISTS (SELECT 1 FROM locked l WHERE l.account_id = d.account_id AND l.shard = d.shard)
)
SELECT g.ord, g.fid, g.tid FROM g
"""  # noqa: S608

# One statement: the cards are locked first (in the order every card money path takes), each
# pending transfer still pending is posted with its funding completed, and the ledger balances
# are locked and changed last, after every other row is written.
_POST = f"""
WITH u AS (
  SELECT * FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[],
                       $7::bigint[], $8::text[], $9::text[], $10::bytea[])
    AS u(card, cid, fid, tid, mid, balance, ikey, tok, body)
), c AS (
  SELECT x.id FROM cards x WHERE x.id = ANY ($2::bigint[]) ORDER BY x.id FOR UPDATE
), r AS (
  UPDATE ledger_transfers p SET status = '{TransferStatus.POSTED.value}'
  FROM u
  WHERE p.id = u.tid AND p.company_id = u.cid AND p.status = '{TransferStatus.PENDING.value}'
    AND (p.expires_at IS NULL OR p.expires_at > $1)
    AND u.card IN (SELECT c.id FROM c)
    AND EXISTS (SELECT 1 FROM card_fundings f WHERE f.id = u.fid
                AND f.status = '{FundingStatus.PENDING.value}')
  RETURNING p.id, p.company_id, p.code
), f AS (
  UPDATE card_fundings f SET status = '{FundingStatus.COMPLETED.value}',
      provider_movement_id = u.mid, completed_at = $1, updated_at = $1
  FROM u JOIN r ON r.id = u.tid
  WHERE f.id = u.fid
  RETURNING f.id
), t AS (
  INSERT INTO ledger_transfers (kind, status, pending_id, code, reference, details, expires_at,
      created_at, company_id)
  SELECT '{TransferKind.POST.value}', '{TransferStatus.POSTED.value}', r.id, r.code, NULL,
         '{{}}'::json, NULL, $1, r.company_id
  FROM r
  RETURNING id, pending_id
), reserved AS (
  SELECT t.id AS post_id, e.account_id, e.shard, e.layer, e.amount, e.currency
  FROM t JOIN ledger_entries e ON e.transfer_id = t.pending_id
), e AS (
  INSERT INTO ledger_entries (transfer_id, account_id, shard, layer, amount, currency)
  SELECT v.post_id, v.account_id, v.shard, v.layer, -v.amount, v.currency FROM reserved v
  UNION ALL
  SELECT v.post_id, v.account_id, v.shard, '{Layer.POSTED.value}', v.amount, v.currency
  FROM reserved v
  RETURNING 1
), card_balance AS (
  UPDATE cards x SET last_balance_minor = u.balance, updated_at = $1
  FROM u JOIN f ON f.id = u.fid
  WHERE x.id = u.card
  RETURNING 1
), finished AS (
  UPDATE idempotency_keys k SET recovery_point = '{FINISHED}', lock_token = NULL,
      locked_until = NULL, response_status = 200, response_body = u.body,
      response_content_type = 'application/json', completed_at = $1
  FROM u JOIN f ON f.id = u.fid
  WHERE k.company_id = u.cid AND k.scope = '{REQUEST_SCOPE}' AND k.key = u.ikey
    AND k.lock_token = u.tok
  RETURNING 1
), written AS (
  SELECT (SELECT count(*) FROM e) + (SELECT count(*) FROM card_balance)
         + (SELECT count(*) FROM finished) AS rows
), d AS (
  SELECT v.account_id, v.shard, sum(v.amount) AS posted,
         sum(CASE WHEN v.layer = '{Layer.PENDING_DEBIT.value}' THEN v.amount ELSE 0 END)
           AS debits,
         sum(CASE WHEN v.layer = '{Layer.PENDING_CREDIT.value}' THEN -v.amount ELSE 0 END)
           AS credits
  FROM reserved v GROUP BY v.account_id, v.shard
), locked AS ({_LOCK_BALANCES}), b AS (
  UPDATE ledger_balances b SET posted = b.posted + d.posted,
      pending_debits = b.pending_debits + d.debits, pending_credits = b.pending_credits + d.credits
  FROM d
  WHERE b.account_id = d.account_id AND b.shard = d.shard
    AND EXISTS (SELECT 1 FROM locked l WHERE l.account_id = d.account_id AND l.shard = d.shard)
)
SELECT f.id FROM f
"""  # noqa: S608

_RELEASE = f"""
WITH u AS (
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])
    AS u(fid, cid, ikey, tok)
), f AS (
  UPDATE card_fundings f SET provider_call_until = NULL
  FROM u WHERE f.id = u.fid AND f.status = '{FundingStatus.PENDING.value}'
)
UPDATE idempotency_keys k SET lock_token = NULL, locked_until = NULL
FROM u
WHERE k.company_id = u.cid AND k.scope = '{REQUEST_SCOPE}' AND k.key = u.ikey
  AND k.lock_token = u.tok
"""  # noqa: S608


@dataclass(frozen=True, slots=True)
class Asked:
    """A top-up as asked, for `read`."""

    card_id: int
    company_id: int
    api_key_id: int


async def read(
    pg: asyncpg.Connection, asked: Sequence[Asked], *, currency: str
) -> list[asyncpg.Record]:
    """What deciding each top-up needs, read without locks (one row per card of the company;
    the locked writes check again): the card, its tier's fee schedule, the company's master
    and fee revenue accounts with the master shards' available balances, and whether the API
    key still holds. `ord` is the top-up's index in `asked`. (An idempotency key used before
    is found by `reserve`, which claims only new ones.)"""
    return await prepared.fetch(
        pg,
        _READ,
        list(range(len(asked))),
        [a.card_id for a in asked],
        [a.company_id for a in asked],
        [a.api_key_id for a in asked],
        currency,
    )


@dataclass(frozen=True, slots=True)
class Reservation:
    """One planned top-up: the rows `reserve` writes for it."""

    card_id: int
    company_id: int
    amount_minor: int
    fee_minor: int
    provider_key: str
    details: str  # the pending transfer's details, JSON
    master_account_id: int
    master_shard: int
    card_account_id: int
    revenue_account_id: int
    revenue_shard: int
    idempotency_key: str
    fingerprint: str
    lease_token: str


@dataclass(frozen=True, slots=True)
class Reserved:
    """A top-up `reserve` reserved: its funding and pending ledger transfer."""

    index: int  # in `planned`
    funding_id: int
    transfer_id: int


async def reserve(
    pg: asyncpg.Connection,
    planned: Sequence[Reservation],
    *,
    currency: str,
    recovery_point: str,
    now: datetime,
    key_lease_until: datetime,
    provider_call_until: datetime,
) -> list[Reserved]:
    """Claim each top-up's idempotency key and reserve its money, in one statement. A key
    claimed meanwhile leaves its top-up out. A card that no longer accepts money once locked
    raises `CardChanged`, and a master account short of the money
    `asyncpg.CheckViolationError` (its balance shards' CHECK): nothing is written."""
    try:
        rows = await prepared.fetch(
            pg,
            _RESERVE,
            now,
            list(range(len(planned))),
            [p.card_id for p in planned],
            [p.company_id for p in planned],
            [p.amount_minor for p in planned],
            [p.fee_minor for p in planned],
            [p.provider_key for p in planned],
            [p.details for p in planned],
            [p.master_account_id for p in planned],
            [p.master_shard for p in planned],
            [p.card_account_id for p in planned],
            [p.revenue_account_id for p in planned],
            [p.revenue_shard for p in planned],
            [p.idempotency_key for p in planned],
            [p.fingerprint for p in planned],
            [p.lease_token for p in planned],
            recovery_point,
            key_lease_until,
            currency,
            provider_call_until,
        )
    except asyncpg.RaiseError as raised:
        if str(raised) == CARD_CHANGED:
            raise CardChanged() from None
        raise
    return [Reserved(int(r["ord"]), int(r["fid"]), int(r["tid"])) for r in rows]


class CardChanged(Exception):
    """A card of the batch changed between the batch's read and its reservation."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """A reserved top-up the provider loaded: what `post` needs to settle it."""

    reservation: Reservation
    reserved: Reserved
    movement_id: str
    balance_minor: int
    body: bytes  # the response, kept for the idempotency key


async def post(pg: asyncpg.Connection, loaded: Sequence[Loaded], *, now: datetime) -> set[int]:
    """Post the loaded top-ups' reservations, complete their fundings, record the cards'
    balances and finish their idempotency keys with the response, in one statement; the ids
    of the fundings posted. One already settled elsewhere is left as it is."""
    rows = await prepared.fetch(
        pg,
        _POST,
        now,
        [item.reservation.card_id for item in loaded],
        [item.reservation.company_id for item in loaded],
        [item.reserved.funding_id for item in loaded],
        [item.reserved.transfer_id for item in loaded],
        [item.movement_id for item in loaded],
        [item.balance_minor for item in loaded],
        [item.reservation.idempotency_key for item in loaded],
        [item.reservation.lease_token for item in loaded],
        [item.body for item in loaded],
    )
    return {int(row["id"]) for row in rows}


async def release(pg: asyncpg.Connection, reserved: Sequence[tuple[Reservation, Reserved]]) -> None:
    """Give up the provider-call lease of each reserved top-up still pending, and the lease on
    its idempotency key, so that a retry with the key resumes it at once."""
    await prepared.fetch(
        pg,
        _RELEASE,
        [ids.funding_id for _, ids in reserved],
        [p.company_id for p, _ in reserved],
        [p.idempotency_key for p, _ in reserved],
        [p.lease_token for p, _ in reserved],
    )
