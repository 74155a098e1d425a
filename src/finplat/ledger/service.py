"""Ledger operations: the only code that changes balances.

Rules implemented here (issue "money core"):
* Every transfer's entries sum to zero per currency; entries are immutable; corrections are
  new transfers.
* An account that may not go negative never has available (posted - pending debits) below
  zero: debits are applied with a conditional UPDATE per balance shard.
* Two-phase transfers: `create_pending` reserves; `post_pending` (full or partial) or
  `void_pending` resolves it exactly once; posting after `expires_at` is refused and the
  expiry job voids what was left.
* No account holds or owes more than `MAX_BALANCE` minor units (counting announced credits
  and reserved debits as if posted): a posting that would take one past it is refused with
  `BalanceLimitExceeded`, so no sequence of postings overflows a BIGINT balance or its sum.
* Lock order is global: non-hot accounts first, then hot (sharded) accounts, each by
  (account id, shard), so concurrent transfers cannot deadlock and a hot account's row lock is
  held for the shortest possible time.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import Conflict, NotFound
from finplat.kit.clock import utcnow
from finplat.ledger import repository
from finplat.ledger.core import (
    MAX_BALANCE,
    Delta,
    Entry,
    Layer,
    Leg,
    PostingAccount,
    TransferKind,
    TransferStatus,
    delta_of,
    deltas_by_shard,
    net_by_account,
    pending_layer,
    releases,
    split_posting,
    validate_legs,
)
from finplat.ledger.models import LedgerAccount

HOT_ACCOUNT_SHARDS = 8


class CompanyAccount(StrEnum):
    """Accounts every company has, one per currency."""

    MASTER = "master"  # the company's own funds; pays top-ups and payouts
    FEE_REVENUE = "fee_revenue"  # fees the platform collected from the company's users
    SETTLEMENT = "settlement"  # money in transit with a provider; mirrors the outside world
    VOUCHERS = "vouchers"  # the company's funds set aside for redeemed vouchers
    REWARDS = "rewards"  # the company's funds set aside for referral rewards


_COMPANY_ACCOUNT_RULES: dict[CompanyAccount, tuple[bool, int]] = {
    # (may go negative, shards)
    CompanyAccount.MASTER: (False, HOT_ACCOUNT_SHARDS),
    CompanyAccount.FEE_REVENUE: (False, HOT_ACCOUNT_SHARDS),
    CompanyAccount.SETTLEMENT: (True, HOT_ACCOUNT_SHARDS),
    CompanyAccount.VOUCHERS: (False, HOT_ACCOUNT_SHARDS),
    CompanyAccount.REWARDS: (False, HOT_ACCOUNT_SHARDS),
}


class InsufficientFunds(Conflict):
    """409, not 400: the request is well formed; the account's state refuses it (one status
    for `INSUFFICIENT_FUNDS` across the API)."""

    code = "INSUFFICIENT_FUNDS"
    message = "The account does not have enough available funds."


class BalanceLimitExceeded(Conflict):
    """409 like `INSUFFICIENT_FUNDS`: the request is well formed; the account's balance would
    go beyond what the ledger keeps (`MAX_BALANCE` minor units)."""

    code = "BALANCE_LIMIT_EXCEEDED"
    message = "The posting would take an account's balance beyond the ledger's limit."


class TransferNotFound(NotFound):
    code = "TRANSFER_NOT_FOUND"
    message = "No ledger transfer with that id."


class TransferAlreadyResolved(Conflict):
    code = "TRANSFER_ALREADY_RESOLVED"
    message = "The pending transfer was already posted, voided or expired."


class TransferExpired(Conflict):
    code = "TRANSFER_EXPIRED"
    message = "The pending transfer expired; its reservation is released."


class AccountNotFound(NotFound):
    code = "ACCOUNT_NOT_FOUND"
    message = "No ledger account with that id."


@dataclass(frozen=True, slots=True)
class Balance:
    account_id: int
    currency: str
    posted: int
    pending_debits: int
    pending_credits: int

    @property
    def available(self) -> int:
        return self.posted - self.pending_debits


@dataclass(frozen=True, slots=True)
class TransferResult:
    transfer_id: int
    status: TransferStatus
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class Reservation:
    """A pending transfer as `create_pending` made it, with the accounts of its legs."""

    result: TransferResult
    accounts: tuple[PostingAccount, ...]


@dataclass(frozen=True, slots=True)
class AccountKey:
    """What names an account apart from its company and currency, with the rules it is
    created with on first use (`account`'s arguments)."""

    code: str
    owner_type: str
    owner_id: str
    allow_negative: bool = False
    shard_count: int = 1

    def of(self, currency: str) -> tuple[str, str, str, str]:
        """The account's unique key within its company."""
        return (self.code, self.owner_type, self.owner_id, currency)


def company_key(company_id: int, kind: CompanyAccount) -> AccountKey:
    """The key of the company's own account of `kind` (`company_account`)."""
    allow_negative, shards = _COMPANY_ACCOUNT_RULES[kind]
    return AccountKey(kind.value, "company", str(company_id), allow_negative, shards)


# ---------------------------------------------------------------------------------- accounts


async def account(
    session: AsyncSession,
    *,
    company_id: int,
    code: str,
    owner_type: str,
    owner_id: str,
    currency: str,
    allow_negative: bool = False,
    shard_count: int = 1,
    new_owner: bool = False,
) -> LedgerAccount:
    """Get or create an account (safe under concurrent first use). `new_owner`: the owner was
    created in this transaction, so the account is created without looking for it first."""

    async def find() -> LedgerAccount | None:
        return await repository.find_account(
            session,
            company_id=company_id,
            code=code,
            owner_type=owner_type,
            owner_id=owner_id,
            currency=currency,
        )

    if not new_owner:
        found = await find()
        if found is not None:
            return found
    created = await repository.insert_account(
        session,
        company_id=company_id,
        code=code,
        owner_type=owner_type,
        owner_id=owner_id,
        currency=currency,
        allow_negative=allow_negative,
        shard_count=shard_count,
        now=utcnow(),
    )
    if created is None:  # a parallel first use created it
        created = await find()
        assert created is not None
    return created


async def accounts_of(
    session: AsyncSession, *, company_id: int, currency: str, keys: Sequence[AccountKey]
) -> list[LedgerAccount]:
    """`account` of each key in `currency`, in the keys' order: those that exist read in one
    statement, each one missing created as `account` creates it."""
    return await accounts_in(
        session, company_id=company_id, wanted=[(key, currency) for key in keys]
    )


async def accounts_in(
    session: AsyncSession, *, company_id: int, wanted: Sequence[tuple[AccountKey, str]]
) -> list[LedgerAccount]:
    """`accounts_of` for keys each in a currency of its own (a conversion's two sides)."""
    found = await repository.find_accounts_of_owners(
        session, company_id=company_id, keys=[key.of(currency) for key, currency in wanted]
    )
    return [
        found.get(key.of(currency)) or await _account_of_key(session, company_id, currency, key)
        for key, currency in wanted
    ]


async def _account_of_key(
    session: AsyncSession, company_id: int, currency: str, key: AccountKey
) -> LedgerAccount:
    return await account(
        session,
        company_id=company_id,
        code=key.code,
        owner_type=key.owner_type,
        owner_id=key.owner_id,
        currency=currency,
        allow_negative=key.allow_negative,
        shard_count=key.shard_count,
    )


async def company_account(
    session: AsyncSession, *, company_id: int, kind: CompanyAccount, currency: str
) -> LedgerAccount:
    return await _account_of_key(session, company_id, currency, company_key(company_id, kind))


async def find_company_account(
    session: AsyncSession, *, company_id: int, kind: CompanyAccount, currency: str
) -> LedgerAccount | None:
    """The company's account of `kind` in `currency` if it was ever used (never creates it)."""
    return await repository.find_account(
        session,
        company_id=company_id,
        code=kind.value,
        owner_type="company",
        owner_id=str(company_id),
        currency=currency,
    )


async def company_accounts_in(
    session: AsyncSession, *, company_id: int, kinds: Sequence[CompanyAccount], currency: str
) -> dict[CompanyAccount, LedgerAccount]:
    """`company_account` of several kinds in one currency, read in one statement (created on
    first use like it)."""
    found = await repository.find_accounts(
        session, **_owned_by_company(company_id, kinds, currency)
    )
    return await _company_accounts_found(session, company_id, kinds, currency, found)


async def company_accounts_and(
    session: AsyncSession,
    *,
    company_id: int,
    kinds: Sequence[CompanyAccount],
    currency: str,
    account_ids: Sequence[int],
) -> tuple[dict[CompanyAccount, LedgerAccount], dict[int, LedgerAccount]]:
    """`company_accounts_in` and the company's accounts of `account_ids` (those that exist,
    by id), read in one statement: a funding's company side and its card's account."""
    by_code, by_id = await repository.find_accounts_and_ids(
        session, **_owned_by_company(company_id, kinds, currency), account_ids=account_ids
    )
    company = await _company_accounts_found(session, company_id, kinds, currency, by_code)
    return company, by_id


async def account_and_company_account(
    session: AsyncSession,
    *,
    company_id: int,
    account_id: int,
    kind: CompanyAccount,
    currency: str,
) -> tuple[PostingAccount, PostingAccount] | None:
    """The company's account `account_id` and its own account of `kind` in `currency`
    (created on first use, as `company_account`), read as plain values in one statement:
    what a posting needs of them, for a caller that changes neither. None when `account_id`
    is not the company's."""
    key = company_key(company_id, kind)
    account, own = await repository.account_and_owned(
        session,
        company_id=company_id,
        account_id=account_id,
        code=key.code,
        owner_type=key.owner_type,
        owner_id=key.owner_id,
        currency=currency,
    )
    if account is None:
        return None
    return account, own or await _account_of_key(session, company_id, currency, key)


def _owned_by_company(
    company_id: int, kinds: Sequence[CompanyAccount], currency: str
) -> dict[str, Any]:
    """The repository's owner arguments for the company's own accounts of `kinds`."""
    return {
        "company_id": company_id,
        "codes": [kind.value for kind in kinds],
        "owner_type": "company",
        "owner_id": str(company_id),
        "currency": currency,
    }


async def _company_accounts_found(
    session: AsyncSession,
    company_id: int,
    kinds: Sequence[CompanyAccount],
    currency: str,
    found: dict[str, LedgerAccount],
) -> dict[CompanyAccount, LedgerAccount]:
    accounts: dict[CompanyAccount, LedgerAccount] = {}
    for kind in kinds:
        existing = found.get(kind.value)
        accounts[kind] = existing or await company_account(
            session, company_id=company_id, kind=kind, currency=currency
        )
    return accounts


async def company_accounts(
    session: AsyncSession, *, company_id: int, kind: CompanyAccount
) -> list[LedgerAccount]:
    return await repository.accounts_of_company(session, company_id=company_id, code=kind.value)


async def balance(session: AsyncSession, *, company_id: int, account_id: int) -> Balance:
    """The balance of the company's account `account_id` (`AccountNotFound` for any other),
    one statement."""
    found = await balances_by_id(session, company_id=company_id, account_ids=[account_id])
    if account_id not in found:
        raise AccountNotFound()
    return found[account_id]


async def balances_by_id(
    session: AsyncSession, *, company_id: int, account_ids: Sequence[int]
) -> dict[int, Balance]:
    """The balances of the company's accounts among `account_ids`, by id, read with the
    accounts in one statement (another company's are absent)."""
    found = await repository.accounts_totals(
        session, company_id=company_id, account_ids=account_ids
    )
    return {i: Balance(i, *totals) for i, totals in found.items()}


async def balance_of(session: AsyncSession, account: LedgerAccount) -> Balance:
    """The balance of an account the caller has read for its company (`account`,
    `company_account`, a card's account): the balance rows alone, one statement."""
    posted, pending_debits, pending_credits = await repository.balance_totals(
        session, account_id=account.id
    )
    return Balance(account.id, account.currency, posted, pending_debits, pending_credits)


async def balances(
    session: AsyncSession, *, company_id: int, accounts: Sequence[LedgerAccount]
) -> list[Balance]:
    own = [a for a in accounts if a.company_id == company_id]
    totals = await repository.balance_totals_many(session, account_ids=[a.id for a in own])
    return [Balance(a.id, a.currency, *totals.get(a.id, (0, 0, 0))) for a in own]


@dataclass(frozen=True, slots=True)
class AccountTotals:
    """The sum of several accounts' balances in one currency."""

    currency: str
    accounts: int
    posted: int
    pending_debits: int
    pending_credits: int

    @property
    def available(self) -> int:
        return self.posted - self.pending_debits


async def totals_by_currency(
    session: AsyncSession, *, company_id: int, code: str
) -> list[AccountTotals]:
    """The company's accounts of `code` (e.g. every card's), summed per currency from their
    balance rows: exact, and one statement whatever the number of accounts."""
    totals = await repository.totals_by_currency(session, company_id=company_id, code=code)
    return [AccountTotals(currency, *totals[currency]) for currency in sorted(totals)]


# --------------------------------------------------------------------------------- transfers


async def post_transfer(
    session: AsyncSession,
    *,
    company_id: int,
    legs: Sequence[Leg],
    code: str,
    reference: str | None = None,
    details: dict[str, Any] | None = None,
    accounts: Sequence[PostingAccount] = (),
) -> TransferResult:
    """Move money at once. Raises `InsufficientFunds` if a guarded account would go below 0.
    `accounts`: the legs' accounts when the caller has just read them (as `reserve`'s)."""
    accounts_by_id = await _accounts_of_legs(session, company_id, legs, accounts)
    entries = await _apply_new_legs(session, accounts_by_id, legs, pending=False)
    return await _record(
        session,
        company_id=company_id,
        kind=TransferKind.SINGLE,
        status=TransferStatus.POSTED,
        code=code,
        entries=entries,
        accounts=accounts_by_id,
        reference=reference,
        details=details,
    )


async def create_pending(
    session: AsyncSession,
    *,
    company_id: int,
    legs: Sequence[Leg],
    code: str,
    expires_at: datetime | None,
    reference: str | None = None,
    details: dict[str, Any] | None = None,
    require_available: bool = False,
    accounts: Sequence[PostingAccount] = (),
) -> TransferResult:
    """Reserve funds: debits leave the available balance now, credits are announced as
    pending; nothing is posted until `post_pending`.

    Debits of an account that may not go negative must be covered by its available balance
    (`InsufficientFunds`). With `require_available` every debit must be, whatever the
    account's rule: the platform's own withdrawals from an account that facts decided
    elsewhere (a card network's purchases) may take below zero. `accounts`: the legs'
    accounts when the caller has just read them (of `company_id`), to save reading them
    again."""
    reservation = await reserve(
        session,
        company_id=company_id,
        legs=legs,
        code=code,
        expires_at=expires_at,
        reference=reference,
        details=details,
        require_available=require_available,
        accounts=accounts,
    )
    return reservation.result


async def reserve(
    session: AsyncSession,
    *,
    company_id: int,
    legs: Sequence[Leg],
    code: str,
    expires_at: datetime | None,
    reference: str | None = None,
    details: dict[str, Any] | None = None,
    require_available: bool = False,
    accounts: Sequence[PostingAccount] = (),
) -> Reservation:
    """`create_pending`, answered with the accounts of its legs: what `post_pending` needs to
    settle it in the same request without reading the transfer again."""
    accounts_by_id = await _accounts_of_legs(session, company_id, legs, accounts)
    entries = await _apply_new_legs(
        session, accounts_by_id, legs, pending=True, require_available=require_available
    )
    result = await _record(
        session,
        company_id=company_id,
        kind=TransferKind.PENDING,
        status=TransferStatus.PENDING,
        code=code,
        entries=entries,
        accounts=accounts_by_id,
        reference=reference,
        details=details,
        expires_at=expires_at,
    )
    return Reservation(result, tuple(accounts_by_id.values()))


async def post_pending(
    session: AsyncSession,
    *,
    company_id: int,
    pending_id: int,
    legs: Sequence[Leg] | None = None,
    details: dict[str, Any] | None = None,
    reservation: Reservation | None = None,
) -> TransferResult:
    """Settle a pending transfer, fully (legs omitted) or partially (legs: each account at
    most what it had pending, same direction). The rest of the reservation is released.
    `reservation`: the pending transfer as its caller created it (entries are immutable, so
    that copy is the truth), to save reading it again."""
    if reservation is not None and reservation.result.transfer_id == pending_id:
        reserved = list(reservation.result.entries)
        known = {a.id: a for a in reservation.accounts if a.company_id == company_id}
    else:
        reserved, known = await _reserved_entries(session, pending_id), {}
    posting_legs = legs if legs is not None else [Leg(e.account_id, e.amount) for e in reserved]
    wanted = [*posting_legs, *(Leg(e.account_id, 0) for e in reserved)]
    accounts: Mapping[int, PostingAccount]
    if all(leg.account_id in known for leg in wanted):
        accounts = known
    else:
        accounts = await _own_accounts(session, company_id, wanted)
    validate_legs(posting_legs, _currencies(accounts))
    entries = releases(reserved) + split_posting(reserved, posting_legs)
    now = utcnow()
    code = await repository.resolve_pending(
        session,
        company_id=company_id,
        pending_id=pending_id,
        status=TransferStatus.POSTED,
        now=now,
        refuse_expired=True,
    )
    if code is None:
        await _raise_unresolvable(session, company_id, pending_id)
    assert code is not None
    return await _resolve(
        session, company_id, code, pending_id, TransferKind.POST, entries, details, now, accounts
    )


async def void_pending(
    session: AsyncSession,
    *,
    company_id: int,
    pending_id: int,
    status: TransferStatus = TransferStatus.VOIDED,
    details: dict[str, Any] | None = None,
) -> TransferResult:
    """Release a pending transfer's reservations without moving money."""
    reserved = await _reserved_entries(session, pending_id)
    accounts = await _own_accounts(session, company_id, [Leg(e.account_id, 0) for e in reserved])
    now = utcnow()
    code = await repository.resolve_pending(
        session,
        company_id=company_id,
        pending_id=pending_id,
        status=status,
        now=now,
        refuse_expired=False,
    )
    if code is None:
        await _raise_unresolvable(session, company_id, pending_id)
    assert code is not None
    return await _resolve(
        session,
        company_id,
        code,
        pending_id,
        TransferKind.VOID,
        releases(reserved),
        details,
        now,
        accounts,
    )


async def expire_due(session: AsyncSession, *, limit: int = 500) -> int:
    """Void pending transfers past their expiry (background job; system scope)."""
    expired = 0
    for company_id, transfer_id in await repository.expired_pending_ids(
        session, now=utcnow(), limit=limit
    ):
        try:
            await void_pending(
                session,
                company_id=company_id,
                pending_id=transfer_id,
                status=TransferStatus.EXPIRED,
                details={"reason": "expired"},
            )
            expired += 1
        except TransferAlreadyResolved:
            continue
    return expired


# ---------------------------------------------------------------------------------- internals


def _currencies(accounts: Mapping[int, PostingAccount]) -> dict[int, str]:
    return {a.id: a.currency for a in accounts.values()}


def _lock_order(account: PostingAccount) -> tuple[bool, int]:
    return (account.shard_count > 1, account.id)


async def _accounts_of_legs(
    session: AsyncSession, company_id: int, legs: Sequence[Leg], known: Sequence[PostingAccount]
) -> Mapping[int, PostingAccount]:
    """The legs' accounts, validated: from those the caller has just read when they are all
    there (and the company's), else read."""
    accounts_by_id = {a.id: a for a in known if a.company_id == company_id}
    if all(leg.account_id in accounts_by_id for leg in legs):
        validate_legs(legs, _currencies(accounts_by_id))
        return accounts_by_id
    return await _accounts_for(session, company_id, legs)


async def _accounts_for(
    session: AsyncSession, company_id: int, legs: Sequence[Leg]
) -> dict[int, LedgerAccount]:
    accounts = await repository.accounts_by_id(
        session, company_id=company_id, account_ids=[leg.account_id for leg in legs]
    )
    validate_legs(legs, _currencies(accounts))
    return accounts


async def _apply_new_legs(
    session: AsyncSession,
    accounts: Mapping[int, PostingAccount],
    legs: Sequence[Leg],
    *,
    pending: bool,
    require_available: bool = False,
) -> list[Entry]:
    """Apply new legs in lock order. All or nothing: if a debit fails for lack of funds,
    the balance rows already changed (still locked by us) are put back before raising, so
    a caller that catches `InsufficientFunds` is never left with half a transfer."""
    entries: list[Entry] = []
    net = net_by_account(legs)
    try:
        for account in sorted((accounts[a] for a in net), key=_lock_order):
            amount = net[account.id]
            layer = pending_layer(amount) if pending else Layer.POSTED
            if amount < 0 and (require_available or not account.allow_negative):
                # A guarded debit keeps its shard at or above zero, far inside the limit; no
                # account holds more than the limit.
                if -amount > MAX_BALANCE:
                    raise InsufficientFunds()
                entries += await _debit_guarded(
                    session, account, amount, layer, covered=require_available
                )
            else:
                entries.append(await _apply_within_limit(session, account, amount, layer))
    except (InsufficientFunds, BalanceLimitExceeded):
        for entry in reversed(entries):
            await repository.apply_delta(
                session,
                account_id=entry.account_id,
                shard=entry.shard,
                delta=_delta(entry.layer, -entry.amount),
                guarded=False,
            )
        raise
    return entries


def _delta(layer: Layer, amount: int) -> Delta:
    return delta_of(Entry(0, 0, layer, amount))


async def _apply_within_limit(
    session: AsyncSession, account: PostingAccount, amount: int, layer: Layer
) -> Entry:
    """Apply an unguarded change to a random shard that stays within its share of
    `MAX_BALANCE` (each conditional UPDATE that fails takes no lock); `BalanceLimitExceeded`
    when no single shard can take it."""
    limit = MAX_BALANCE // account.shard_count
    if abs(amount) > limit:
        raise BalanceLimitExceeded()
    shards = list(range(account.shard_count))
    random.shuffle(shards)  # load spreading only
    for shard in shards:
        if await repository.apply_delta(
            session,
            account_id=account.id,
            shard=shard,
            delta=_delta(layer, amount),
            guarded=False,
            limit=limit,
        ):
            return Entry(account.id, shard, layer, amount)
    raise BalanceLimitExceeded()


async def _debit_guarded(
    session: AsyncSession, account: PostingAccount, amount: int, layer: Layer, *, covered: bool
) -> list[Entry]:
    """Take `amount` (< 0) from an account without taking any shard below its floor (below
    zero when `covered`, for an account that may otherwise go negative).

    First a random shard; if it cannot cover the amount, the shards that could a moment ago
    (an unlocked read, so money concentrated in a few shards costs one read rather than a
    failed UPDATE per empty shard), each by a conditional UPDATE (no lock is held by a failed
    one); if none can, lock all shards in order and take it across several.
    """
    delta = _delta(layer, amount)
    first = random.randrange(account.shard_count)  # noqa: S311 - load spreading only
    if await repository.apply_delta(
        session, account_id=account.id, shard=first, delta=delta, guarded=True, covered=covered
    ):
        return [Entry(account.id, first, layer, amount)]
    if account.shard_count == 1:  # its one shard could not cover it
        raise InsufficientFunds()
    available = await repository.available_by_shard(session, account_id=account.id)
    candidates = [shard for shard, held in available.items() if shard != first and held >= -amount]
    random.shuffle(candidates)
    for shard in candidates:
        if await repository.apply_delta(
            session, account_id=account.id, shard=shard, delta=delta, guarded=True, covered=covered
        ):
            return [Entry(account.id, shard, layer, amount)]
    shards = await repository.lock_shards(session, account_id=account.id)
    if sum(s.posted - s.pending_debits for s in shards) < -amount:
        raise InsufficientFunds()
    entries: list[Entry] = []
    remaining = -amount
    for row in shards:
        take = min(remaining, row.posted - row.pending_debits)
        if take <= 0:
            continue
        applied = await repository.apply_delta(
            session,
            account_id=account.id,
            shard=row.shard,
            delta=_delta(layer, -take),
            guarded=True,
            covered=covered,
        )
        assert applied, "shard changed while locked"
        entries.append(Entry(account.id, row.shard, layer, -take))
        remaining -= take
        if remaining == 0:
            break
    return entries


async def _reserved_entries(session: AsyncSession, pending_id: int) -> list[Entry]:
    """The entries of a pending transfer (none: no such transfer). Whose it is, and whether
    it is pending, the resolving UPDATE decides; `_own_accounts` refuses another company's
    entries before that."""
    reserved = await repository.entries_of(session, transfer_id=pending_id)
    if not reserved:
        raise TransferNotFound()
    return reserved


async def _own_accounts(
    session: AsyncSession, company_id: int, legs: Sequence[Leg]
) -> dict[int, LedgerAccount]:
    """The legs' accounts, all of `company_id`'s, or `TransferNotFound` (another company's
    transfer answers as one that does not exist)."""
    accounts = await repository.accounts_by_id(
        session, company_id=company_id, account_ids=[leg.account_id for leg in legs]
    )
    if any(leg.account_id not in accounts for leg in legs):
        raise TransferNotFound()
    return accounts


async def _raise_unresolvable(session: AsyncSession, company_id: int, pending_id: int) -> None:
    """A transfer the conditional UPDATE could not resolve: not a pending transfer of the
    company (`TransferNotFound`); still PENDING means it expired (`TransferExpired`); anything
    else means another caller resolved it first (`TransferAlreadyResolved`)."""
    # The database's current row, never a loaded copy: a caller that lost the race would
    # call a resolved transfer expired.
    found = await repository.transfer_status(session, company_id=company_id, transfer_id=pending_id)
    if found is None or found[0] != TransferKind.PENDING.value:
        raise TransferNotFound()
    if found[1] == TransferStatus.PENDING.value:
        raise TransferExpired()
    raise TransferAlreadyResolved()


async def _resolve(
    session: AsyncSession,
    company_id: int,
    code: str,
    pending_id: int,
    kind: TransferKind,
    entries: list[Entry],
    details: dict[str, Any] | None,
    now: datetime,
    accounts: Mapping[int, PostingAccount],
) -> TransferResult:
    deltas = deltas_by_shard(entries)
    in_lock_order = sorted(deltas, key=lambda k: (*_lock_order(accounts[k[0]]), k[1]))
    # Resolving never lowers an available balance (see core), so no guard is needed; the
    # database CHECK still stands behind it.
    await repository.add_deltas(
        session,
        [(account_id, shard, deltas[(account_id, shard)]) for account_id, shard in in_lock_order],
    )
    return await _record(
        session,
        company_id=company_id,
        kind=kind,
        status=TransferStatus.POSTED,
        code=code,
        entries=entries,
        accounts=accounts,
        pending_id=pending_id,
        details=details,
        now=now,
    )


async def _record(
    session: AsyncSession,
    *,
    company_id: int,
    kind: TransferKind,
    status: TransferStatus,
    code: str,
    entries: list[Entry],
    accounts: Mapping[int, PostingAccount],
    pending_id: int | None = None,
    reference: str | None = None,
    details: dict[str, Any] | None = None,
    expires_at: datetime | None = None,
    now: datetime | None = None,
) -> TransferResult:
    """Write the transfer row and its entries (the balances are already changed)."""
    transfer_id = await repository.insert_transfer(
        session,
        company_id=company_id,
        kind=kind.value,
        status=status.value,
        code=code,
        pending_id=pending_id,
        reference=reference,
        details=details or {},
        expires_at=expires_at,
        now=now or utcnow(),
        entries=entries,
        currencies=_currencies(accounts),
    )
    return TransferResult(transfer_id, status, tuple(entries))
