"""All ledger SQL. Account reads are scoped to the caller's company; balance rows are reached
only through accounts already checked to be the company's.

The posting path (balance updates, transfer and entry rows, resolving a pending transfer) runs
prebuilt Core statements on the session's connection: no ORM statement is built, compiled or
scoped per call (the ORM path cost most of a top-up's CPU; see docs/performance.md). They
carry their company filter themselves where the table has one, like every repository query.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Integer,
    String,
    Table,
    bindparam,
    func,
    insert,
    or_,
    select,
    true,
    tuple_,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from finplat.db import driver_statements
from finplat.db.dialect import create_unless_taken, for_update
from finplat.ledger.core import AccountTerms, Delta, Entry, Layer, TransferKind, TransferStatus
from finplat.ledger.models import LedgerAccount, LedgerBalance, LedgerEntry, LedgerTransfer

# Account reads run on every posting: built once (the ORM still loads the entities).
_FIND_ACCOUNT = select(LedgerAccount).where(
    LedgerAccount.company_id == bindparam("a_company_id"),
    LedgerAccount.code == bindparam("a_code"),
    LedgerAccount.owner_type == bindparam("a_owner_type"),
    LedgerAccount.owner_id == bindparam("a_owner_id"),
    LedgerAccount.currency == bindparam("a_currency"),
)
_FIND_ACCOUNTS = select(LedgerAccount).where(
    LedgerAccount.company_id == bindparam("a_company_id"),
    LedgerAccount.code.in_(bindparam("a_codes", expanding=True)),
    LedgerAccount.owner_type == bindparam("a_owner_type"),
    LedgerAccount.owner_id == bindparam("a_owner_id"),
    LedgerAccount.currency == bindparam("a_currency"),
)
_FIND_ACCOUNTS_OF_OWNERS = select(LedgerAccount).where(
    LedgerAccount.company_id == bindparam("a_company_id"),
    tuple_(
        LedgerAccount.code, LedgerAccount.owner_type, LedgerAccount.owner_id, LedgerAccount.currency
    ).in_(bindparam("a_keys", expanding=True)),
)
_ACCOUNTS_BY_ID = select(LedgerAccount).where(
    LedgerAccount.company_id == bindparam("a_company_id"),
    LedgerAccount.id.in_(bindparam("a_ids", expanding=True)),
)
_OWNED_OR_BY_ID = (
    LedgerAccount.company_id == bindparam("a_company_id"),
    or_(
        (LedgerAccount.code.in_(bindparam("a_codes", expanding=True)))
        & (LedgerAccount.owner_type == bindparam("a_owner_type"))
        & (LedgerAccount.owner_id == bindparam("a_owner_id"))
        & (LedgerAccount.currency == bindparam("a_currency")),
        LedgerAccount.id.in_(bindparam("a_ids", expanding=True)),
    ),
)
_FIND_ACCOUNTS_AND_IDS = select(LedgerAccount).where(*_OWNED_OR_BY_ID)

# An account's posting terms and the owner's account of a code, as values over the table, run
# below SQLAlchemy's execution (`db.driver_statements`): a card purchase's two sides, where
# loading two entities through the ORM cost twice the statement.
_accounts = cast(Table, LedgerAccount.__table__)
_ACCOUNT_AND_OWNED = select(
    _accounts.c.id,
    _accounts.c.company_id,
    _accounts.c.currency,
    _accounts.c.allow_negative,
    _accounts.c.shard_count,
).where(
    _accounts.c.company_id == bindparam("company_id", type_=BigInteger),
    or_(
        _accounts.c.id == bindparam("account_id", type_=BigInteger),
        (_accounts.c.code == bindparam("code", type_=String))
        & (_accounts.c.owner_type == bindparam("owner_type", type_=String))
        & (_accounts.c.owner_id == bindparam("owner_id", type_=String))
        & (_accounts.c.currency == bindparam("currency", type_=String)),
    ),
)


async def find_account(
    session: AsyncSession,
    *,
    company_id: int,
    code: str,
    owner_type: str,
    owner_id: str,
    currency: str,
) -> LedgerAccount | None:
    params = {
        "a_company_id": company_id,
        "a_code": code,
        "a_owner_type": owner_type,
        "a_owner_id": owner_id,
        "a_currency": currency,
    }
    return (await session.execute(_FIND_ACCOUNT, params)).scalar_one_or_none()


async def find_accounts(
    session: AsyncSession,
    *,
    company_id: int,
    codes: Sequence[str],
    owner_type: str,
    owner_id: str,
    currency: str,
) -> dict[str, LedgerAccount]:
    """The owner's accounts of these codes in `currency` (one statement), by code."""
    params = _owner_params(company_id, codes, owner_type, owner_id, currency)
    return {a.code: a for a in (await session.execute(_FIND_ACCOUNTS, params)).scalars()}


async def find_accounts_of_owners(
    session: AsyncSession, *, company_id: int, keys: Sequence[tuple[str, str, str, str]]
) -> dict[tuple[str, str, str, str], LedgerAccount]:
    """The company's accounts of these (code, owner type, owner id, currency) keys that exist
    (one statement), by key."""
    params = {"a_company_id": company_id, "a_keys": sorted(set(keys))}
    found = (await session.execute(_FIND_ACCOUNTS_OF_OWNERS, params)).scalars()
    return {(a.code, a.owner_type, a.owner_id, a.currency): a for a in found}


async def find_accounts_and_ids(
    session: AsyncSession,
    *,
    company_id: int,
    codes: Sequence[str],
    owner_type: str,
    owner_id: str,
    currency: str,
    account_ids: Iterable[int],
) -> tuple[dict[str, LedgerAccount], dict[int, LedgerAccount]]:
    """`find_accounts` and `accounts_by_id` of the same company in one statement: the owner's
    accounts by code, and the accounts of `account_ids` by id."""
    wanted_codes, wanted_ids = sorted(set(codes)), sorted(set(account_ids))
    params = {
        **_owner_params(company_id, wanted_codes, owner_type, owner_id, currency),
        "a_ids": wanted_ids,
    }
    found = list((await session.execute(_FIND_ACCOUNTS_AND_IDS, params)).scalars())
    by_code = {
        a.code: a
        for a in found
        if a.code in wanted_codes
        and a.owner_type == owner_type
        and a.owner_id == owner_id
        and a.currency == currency
    }
    return by_code, {a.id: a for a in found if a.id in wanted_ids}


async def account_and_owned(
    session: AsyncSession,
    *,
    company_id: int,
    account_id: int,
    code: str,
    owner_type: str,
    owner_id: str,
    currency: str,
) -> tuple[AccountTerms | None, AccountTerms | None]:
    """The company's account `account_id` and the owner's account of `code` in `currency`, as
    values (`AccountTerms`), in one statement; None for either the company does not have."""
    connection = await driver_statements.connection_of(session)
    params = {
        "company_id": company_id,
        "account_id": account_id,
        "code": code,
        "owner_type": owner_type,
        "owner_id": owner_id,
        "currency": currency,
    }
    by_id = owned = None
    for row in await driver_statements.returning(connection, _ACCOUNT_AND_OWNED, params):
        terms = AccountTerms(
            row.id, row.company_id, row.currency, row.allow_negative, row.shard_count
        )
        if row.id == account_id:
            by_id = terms
        else:
            owned = terms
    return by_id, owned


def _owner_params(
    company_id: int, codes: Sequence[str], owner_type: str, owner_id: str, currency: str
) -> dict[str, Any]:
    return {
        "a_company_id": company_id,
        "a_codes": sorted(set(codes)),
        "a_owner_type": owner_type,
        "a_owner_id": owner_id,
        "a_currency": currency,
    }


async def insert_account(
    session: AsyncSession,
    *,
    company_id: int,
    code: str,
    owner_type: str,
    owner_id: str,
    currency: str,
    allow_negative: bool,
    shard_count: int,
    now: datetime,
) -> LedgerAccount | None:
    """Create the account and its balance shards unless it already exists (race-safe): the
    account created, or None when another had created it first (read it then)."""
    values = {
        "company_id": company_id,
        "code": code,
        "owner_type": owner_type,
        "owner_id": owner_id,
        "currency": currency,
        "allow_negative": allow_negative,
        "shard_count": shard_count,
        "created_at": now,
    }
    account = await create_unless_taken(session, LedgerAccount, values)
    if account is None:
        return None
    floor = None if allow_negative else 0
    await session.execute(
        insert(LedgerBalance),
        [
            {
                "account_id": account.id,
                "shard": shard,
                "posted": 0,
                "pending_debits": 0,
                "pending_credits": 0,
                "floor": floor,
            }
            for shard in range(shard_count)
        ],
    )
    return account


async def accounts_by_id(
    session: AsyncSession, *, company_id: int, account_ids: Iterable[int]
) -> dict[int, LedgerAccount]:
    params = {"a_company_id": company_id, "a_ids": sorted(set(account_ids))}
    return {a.id: a for a in (await session.execute(_ACCOUNTS_BY_ID, params)).scalars()}


async def accounts_of_company(
    session: AsyncSession, *, company_id: int, code: str
) -> list[LedgerAccount]:
    stmt = (
        select(LedgerAccount)
        .where(LedgerAccount.company_id == company_id, LedgerAccount.code == code)
        .order_by(LedgerAccount.currency)
    )
    return list((await session.execute(stmt)).scalars())


_BALANCES = cast(Table, LedgerBalance.__table__)
_TRANSFERS = cast(Table, LedgerTransfer.__table__)
_ENTRIES = cast(Table, LedgerEntry.__table__)

_ADD_DELTA = (
    update(_BALANCES)
    .where(
        _BALANCES.c.account_id == bindparam("b_account_id"),
        _BALANCES.c.shard == bindparam("b_shard"),
    )
    .values(
        posted=_BALANCES.c.posted + bindparam("d_posted"),
        pending_debits=_BALANCES.c.pending_debits + bindparam("d_pending_debits"),
        pending_credits=_BALANCES.c.pending_credits + bindparam("d_pending_credits"),
    )
)
_ADD_DELTA_GUARDED = _ADD_DELTA.where(
    or_(
        _BALANCES.c.floor.is_(None),
        _BALANCES.c.posted - _BALANCES.c.pending_debits + bindparam("d_available")
        >= _BALANCES.c.floor,
    )
)
# Guarded at zero whatever the shard's floor: a withdrawal the available balance must cover.
_ADD_DELTA_COVERED = _ADD_DELTA.where(
    _BALANCES.c.posted - _BALANCES.c.pending_debits + bindparam("d_available") >= 0
)
# Unguarded changes (credits, debits of an account that may go negative) stay within a limit:
# what the posted balance would be once every announced credit posts, and once every reserved
# debit posts. The bounds are computed in Python so that the SQL never adds past a BIGINT.
_ADD_DELTA_WITHIN_LIMIT = _ADD_DELTA.where(
    _BALANCES.c.posted + _BALANCES.c.pending_credits <= bindparam("l_highest"),
    _BALANCES.c.posted - _BALANCES.c.pending_debits >= bindparam("l_lowest"),
)
_AVAILABLE_BY_SHARD = select(
    _BALANCES.c.shard, _BALANCES.c.posted - _BALANCES.c.pending_debits
).where(_BALANCES.c.account_id == bindparam("b_account_id"))
_INSERT_TRANSFER = insert(_TRANSFERS).returning(_TRANSFERS.c.id)
_INSERT_ENTRY = insert(_ENTRIES)
_ENTRIES_OF = (
    select(_ENTRIES.c.account_id, _ENTRIES.c.shard, _ENTRIES.c.layer, _ENTRIES.c.amount)
    .where(_ENTRIES.c.transfer_id == bindparam("t_id"))
    .order_by(_ENTRIES.c.id)
)
_RESOLVE = (
    update(_TRANSFERS)
    .where(
        _TRANSFERS.c.company_id == bindparam("t_company_id"),
        _TRANSFERS.c.id == bindparam("t_id"),
        _TRANSFERS.c.kind == TransferKind.PENDING.value,
        _TRANSFERS.c.status == TransferStatus.PENDING.value,
    )
    .values(status=bindparam("t_status"))
    .returning(_TRANSFERS.c.code)
)
_RESOLVE_UNEXPIRED = _RESOLVE.where(
    or_(_TRANSFERS.c.expires_at.is_(None), _TRANSFERS.c.expires_at > bindparam("t_now"))
)
_TRANSFER_STATUS = select(_TRANSFERS.c.kind, _TRANSFERS.c.status).where(
    _TRANSFERS.c.company_id == bindparam("t_company_id"), _TRANSFERS.c.id == bindparam("t_id")
)


async def _connection(session: AsyncSession) -> AsyncConnection:
    """The session's connection, in its transaction (Core statements, no ORM layer)."""
    return await driver_statements.connection_of(session)


async def apply_delta(
    session: AsyncSession,
    *,
    account_id: int,
    shard: int,
    delta: Delta,
    guarded: bool,
    covered: bool = False,
    limit: int | None = None,
) -> bool:
    """Add `delta` to one balance shard. When `guarded`, only if the shard's available
    balance stays at or above its floor (at or above 0 when `covered`, even for a shard
    without a floor); otherwise, with a `limit`, only if `posted + pending_credits` stays at
    or below it and `posted - pending_debits` at or above `-limit`. Returns whether the row
    was changed.

    One conditional UPDATE: the check and the write are atomic under the row lock, so two
    concurrent debits can never both pass on the same funds.
    """
    params = _delta_params(account_id, shard, delta)
    statement = _ADD_DELTA
    if guarded:
        params["d_available"] = delta.available
        statement = _ADD_DELTA_COVERED if covered else _ADD_DELTA_GUARDED
    elif limit is not None:
        params["l_highest"] = limit - (delta.posted + delta.pending_credits)
        params["l_lowest"] = -limit - delta.available
        statement = _ADD_DELTA_WITHIN_LIMIT
    connection = await _connection(session)
    return await driver_statements.execute(connection, statement, params) == 1


async def add_deltas(session: AsyncSession, deltas: Sequence[tuple[int, int, Delta]]) -> None:
    """Add each `(account_id, shard, delta)` to its shard, unconditionally and in the order
    given (the lock order): one execution of one statement for all of them, where
    `apply_delta` would be one each. For changes that need no check (a posting or a release
    never lowers an available balance); the database's CHECKs still stand behind them."""
    params = [_delta_params(account_id, shard, delta) for account_id, shard, delta in deltas]
    if params:
        connection = await _connection(session)
        await driver_statements.execute_many(connection, _ADD_DELTA, params)


def _delta_params(account_id: int, shard: int, delta: Delta) -> dict[str, Any]:
    """The shard and the change, as `_ADD_DELTA` (and the statements built on it) bind them."""
    return {
        "b_account_id": account_id,
        "b_shard": shard,
        "d_posted": delta.posted,
        "d_pending_debits": delta.pending_debits,
        "d_pending_credits": delta.pending_credits,
    }


async def available_by_shard(session: AsyncSession, *, account_id: int) -> dict[int, int]:
    """Each shard's available balance (posted - pending debits), read without a lock: a hint
    for choosing a shard, never a check (the conditional UPDATE is the check)."""
    connection = await _connection(session)
    rows = await driver_statements.returning(
        connection, _AVAILABLE_BY_SHARD, {"b_account_id": account_id}
    )
    return {int(shard): int(held) for shard, held in rows}


async def lock_shards(session: AsyncSession, *, account_id: int) -> list[LedgerBalance]:
    """Lock every shard of an account in shard order (the global lock order) and read them as
    they are now: balances change through Core statements, so shard objects the session loaded
    earlier (sessions outlive their transactions here) would otherwise come back stale."""
    stmt = for_update(
        select(LedgerBalance)
        .where(LedgerBalance.account_id == account_id)
        .order_by(LedgerBalance.shard)
    ).execution_options(populate_existing=True)
    return list((await session.execute(stmt)).scalars())


async def insert_transfer(
    session: AsyncSession,
    *,
    company_id: int,
    kind: str,
    status: str,
    code: str,
    pending_id: int | None,
    reference: str | None,
    details: dict[str, Any],
    expires_at: datetime | None,
    now: datetime,
    entries: Sequence[Entry],
    currencies: dict[int, str],
) -> int:
    """The transfer row and its entries; the transfer's id. On PostgreSQL one statement (the
    transfer inserted in a CTE, the entries from arrays), a round trip fewer on every
    posting; elsewhere, and for a transfer without entries, one for each table."""
    transfer = {
        "company_id": company_id,
        "kind": kind,
        "status": status,
        "code": code,
        "pending_id": pending_id,
        "reference": reference,
        "details": details,
        "expires_at": expires_at,
        "created_at": now,
    }
    connection = await _connection(session)
    if entries and connection.dialect.name == "postgresql":
        params = {f"t_{name}": value for name, value in transfer.items()}
        params.update(
            e_account_ids=[e.account_id for e in entries],
            e_shards=[e.shard for e in entries],
            e_layers=[e.layer.value for e in entries],
            e_amounts=[e.amount for e in entries],
            e_currencies=[currencies[e.account_id] for e in entries],
        )
        found = await driver_statements.returning(connection, _INSERT_TRANSFER_WITH_ENTRIES, params)
        return int(found[0][0])
    transfer_id = int((await connection.execute(_INSERT_TRANSFER, transfer)).scalar_one())
    if entries:
        await connection.execute(
            _INSERT_ENTRY,
            [
                {
                    "transfer_id": transfer_id,
                    "account_id": e.account_id,
                    "shard": e.shard,
                    "layer": e.layer.value,
                    "amount": e.amount,
                    "currency": currencies[e.account_id],
                }
                for e in entries
            ],
        )
    return transfer_id


# The transfer and its entries in one statement (PostgreSQL): the entries' columns arrive as
# arrays of one length, so the statement is the same whatever the number of legs, and the
# entries take ids in the order given (`entries_of` reads them back in that order).
_NEW_TRANSFER = (
    insert(_TRANSFERS)
    .values(
        {c.name: bindparam(f"t_{c.name}", type_=c.type) for c in _TRANSFERS.c if c.name != "id"}
    )
    .returning(_TRANSFERS.c.id)
    .cte("new_transfer")
)
_NEW_ENTRIES = (
    func.unnest(
        bindparam("e_account_ids", type_=ARRAY(BigInteger)),
        bindparam("e_shards", type_=ARRAY(Integer)),
        bindparam("e_layers", type_=ARRAY(String)),
        bindparam("e_amounts", type_=ARRAY(BigInteger)),
        bindparam("e_currencies", type_=ARRAY(String)),
    )
    .table_valued("account_id", "shard", "layer", "amount", "currency", name="entry")
    .render_derived()
)
_INSERT_TRANSFER_WITH_ENTRIES = (
    insert(_ENTRIES)
    .from_select(
        ["transfer_id", "account_id", "shard", "layer", "amount", "currency"],
        select(
            _NEW_TRANSFER.c.id,
            _NEW_ENTRIES.c.account_id,
            _NEW_ENTRIES.c.shard,
            _NEW_ENTRIES.c.layer,
            _NEW_ENTRIES.c.amount,
            _NEW_ENTRIES.c.currency,
        ).select_from(_NEW_TRANSFER.join(_NEW_ENTRIES, true())),
    )
    .returning(_ENTRIES.c.transfer_id)
)


async def transfer_status(
    session: AsyncSession, *, company_id: int, transfer_id: int
) -> tuple[str, str] | None:
    """The transfer's kind and status as the database holds them now, never the session's
    loaded copy."""
    # A Core select: an ORM select would hand back the copy already in the identity map,
    # which still says PENDING after another transaction resolved it.
    connection = await _connection(session)
    rows = await driver_statements.returning(
        connection, _TRANSFER_STATUS, {"t_company_id": company_id, "t_id": transfer_id}
    )
    return (str(rows[0][0]), str(rows[0][1])) if rows else None


async def entries_of(session: AsyncSession, *, transfer_id: int) -> list[Entry]:
    connection = await _connection(session)
    rows = await driver_statements.returning(connection, _ENTRIES_OF, {"t_id": transfer_id})
    return [
        Entry(int(account_id), int(shard), Layer(layer), int(amount))
        for account_id, shard, layer, amount in rows
    ]


async def resolve_pending(
    session: AsyncSession,
    *,
    company_id: int,
    pending_id: int,
    status: TransferStatus,
    now: datetime,
    refuse_expired: bool,
) -> str | None:
    """Move a pending transfer out of PENDING; its code, only for the one caller that did it
    (None for every other caller, and for an id that is not a pending transfer of the
    company)."""
    params: dict[str, Any] = {
        "t_company_id": company_id,
        "t_id": pending_id,
        "t_status": status.value,
    }
    if refuse_expired:
        params["t_now"] = now
    connection = await _connection(session)
    rows = await driver_statements.returning(
        connection, _RESOLVE_UNEXPIRED if refuse_expired else _RESOLVE, params
    )
    return str(rows[0][0]) if rows else None


async def expired_pending_ids(
    session: AsyncSession, *, now: datetime, limit: int
) -> list[tuple[int, int]]:
    """(company_id, transfer_id) of pending transfers past their expiry (system scope)."""
    stmt = (
        select(LedgerTransfer.company_id, LedgerTransfer.id)
        .where(
            LedgerTransfer.status == TransferStatus.PENDING.value,
            LedgerTransfer.expires_at.is_not(None),
            LedgerTransfer.expires_at <= now,
        )
        .order_by(LedgerTransfer.expires_at)
        .limit(limit)
    )
    return [(int(c), int(t)) for c, t in (await session.execute(stmt)).all()]


# Built once: a card's balance is read two or three times in every purchase, and building the
# expression on each call was a visible share of the authorization's profile.
_BALANCE_TOTALS = select(
    func.coalesce(func.sum(LedgerBalance.posted), 0),
    func.coalesce(func.sum(LedgerBalance.pending_debits), 0),
    func.coalesce(func.sum(LedgerBalance.pending_credits), 0),
).where(LedgerBalance.account_id == bindparam("account_id"))


_ACCOUNTS_TOTALS = (
    select(
        LedgerAccount.id,
        LedgerAccount.currency,
        func.sum(LedgerBalance.posted),
        func.sum(LedgerBalance.pending_debits),
        func.sum(LedgerBalance.pending_credits),
    )
    .select_from(LedgerAccount)
    .outerjoin(LedgerBalance, LedgerBalance.account_id == LedgerAccount.id)
    .where(
        LedgerAccount.company_id == bindparam("a_company_id"),
        LedgerAccount.id.in_(bindparam("a_ids", expanding=True)),
    )
    .group_by(LedgerAccount.id, LedgerAccount.currency)
)


async def accounts_totals(
    session: AsyncSession, *, company_id: int, account_ids: Iterable[int]
) -> dict[int, tuple[str, int, int, int]]:
    """The currency and `balance_totals` of each of the company's accounts among
    `account_ids`, by id, in the statement that finds them (another company's are absent)."""
    params = {"a_company_id": company_id, "a_ids": sorted(set(account_ids))}
    found = await session.execute(_ACCOUNTS_TOTALS, params)
    return {
        int(account_id): (str(currency), int(posted or 0), int(debits or 0), int(credits or 0))
        for account_id, currency, posted, debits, credits in found
    }


async def balance_totals(session: AsyncSession, *, account_id: int) -> tuple[int, int, int]:
    """(posted, pending_debits, pending_credits) summed over the account's shards."""
    found = await session.execute(_BALANCE_TOTALS, {"account_id": account_id})
    posted, pending_debits, pending_credits = found.one()
    return int(posted), int(pending_debits), int(pending_credits)


_BALANCE_TOTALS_MANY = (
    select(
        LedgerBalance.account_id,
        func.sum(LedgerBalance.posted),
        func.sum(LedgerBalance.pending_debits),
        func.sum(LedgerBalance.pending_credits),
    )
    .where(LedgerBalance.account_id.in_(bindparam("account_ids", expanding=True)))
    .group_by(LedgerBalance.account_id)
)


async def balance_totals_many(
    session: AsyncSession, *, account_ids: Sequence[int]
) -> dict[int, tuple[int, int, int]]:
    """Per account of `account_ids` that has balance rows, (posted, pending_debits,
    pending_credits) summed over its shards, in one statement."""
    found = await session.execute(_BALANCE_TOTALS_MANY, {"account_ids": list(account_ids)})
    return {int(a): (int(p), int(d), int(c)) for a, p, d, c in found.all()}


async def totals_by_currency(
    session: AsyncSession, *, company_id: int, code: str
) -> dict[str, tuple[int, int, int, int]]:
    """Per currency, the company's accounts of `code`: (how many, posted, pending debits,
    pending credits) summed over every account's shards, in one statement."""
    stmt = (
        select(
            LedgerAccount.currency,
            func.count(func.distinct(LedgerAccount.id)),
            func.coalesce(func.sum(LedgerBalance.posted), 0),
            func.coalesce(func.sum(LedgerBalance.pending_debits), 0),
            func.coalesce(func.sum(LedgerBalance.pending_credits), 0),
        )
        .select_from(LedgerAccount)
        .outerjoin(LedgerBalance, LedgerBalance.account_id == LedgerAccount.id)
        .where(LedgerAccount.company_id == company_id, LedgerAccount.code == code)
        .group_by(LedgerAccount.currency)
    )
    return {
        str(currency): (int(count), int(posted), int(debits), int(credits))
        for currency, count, posted, debits, credits in (await session.execute(stmt)).all()
    }
