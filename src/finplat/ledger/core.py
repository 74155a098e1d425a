"""Pure ledger rules: legs, layers and balance deltas. No I/O.

A transfer is two or more legs on accounts; a leg's amount is signed (negative = debit, money
leaves the account; positive = credit). Legs of one transfer sum to zero per currency.

Every entry lives in one of three layers of an account's balance:

* `posted`          settled money; `posted` balance = sum of posted entries.
* `pending_debit`   money reserved to leave (negative on reserve, positive on release);
                    `pending_debits` = -(sum of these entries).
* `pending_credit`  money announced to arrive (positive on announce, negative on release);
                    `pending_credits` = sum of these entries.

`available` = posted - pending_debits: incoming pending money cannot be spent, reserved money
cannot be spent twice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class Layer(StrEnum):
    POSTED = "posted"
    PENDING_DEBIT = "pending_debit"
    PENDING_CREDIT = "pending_credit"


class TransferKind(StrEnum):
    SINGLE = "single"  # posted at once
    PENDING = "pending"  # reserves; later resolved by exactly one POST or VOID transfer
    POST = "post"
    VOID = "void"


class TransferStatus(StrEnum):
    POSTED = "POSTED"
    PENDING = "PENDING"
    VOIDED = "VOIDED"
    EXPIRED = "EXPIRED"


# The most an account may hold or owe, in minor units of its currency (10^16 EUR, 10^12 USDC):
# `posted + pending_credits <= MAX_BALANCE` and `posted - pending_debits >= -MAX_BALANCE`, so
# every posted balance, and every sum of an account's shards (pending ones at most twice this),
# stays well inside a BIGINT (2^63 - 1, about 9.2 * 10^18). A sharded account's shards each keep
# `MAX_BALANCE // shard_count`.
MAX_BALANCE = 10**18


class PostingAccount(Protocol):
    """What a posting needs of an account: the ORM's `LedgerAccount` is one, and so is an
    `AccountTerms` read as plain values where loading the entity would cost more than the
    posting (the real-time card decision)."""

    @property
    def id(self) -> int: ...
    @property
    def company_id(self) -> int: ...
    @property
    def currency(self) -> str: ...
    @property
    def allow_negative(self) -> bool: ...
    @property
    def shard_count(self) -> int: ...


@dataclass(frozen=True, slots=True)
class AccountTerms:
    """An account's posting terms as plain values (`PostingAccount`)."""

    id: int
    company_id: int
    currency: str
    allow_negative: bool
    shard_count: int


class LedgerRuleError(ValueError):
    """A transfer that the ledger refuses to record (a programming error, not a user error)."""


@dataclass(frozen=True, slots=True)
class Leg:
    account_id: int
    amount: int  # minor units, signed


@dataclass(frozen=True, slots=True)
class Entry:
    account_id: int
    shard: int
    layer: Layer
    amount: int


@dataclass(frozen=True, slots=True)
class Delta:
    """Change to one balance row (an account shard)."""

    posted: int = 0
    pending_debits: int = 0
    pending_credits: int = 0

    @property
    def available(self) -> int:
        return self.posted - self.pending_debits

    def __add__(self, other: Delta) -> Delta:
        return Delta(
            self.posted + other.posted,
            self.pending_debits + other.pending_debits,
            self.pending_credits + other.pending_credits,
        )

    @property
    def is_zero(self) -> bool:
        return not (self.posted or self.pending_debits or self.pending_credits)


def validate_legs(legs: Sequence[Leg], currencies: Mapping[int, str]) -> None:
    """Legs must be non-zero, on known accounts, and sum to zero in every currency."""
    if len(legs) < 2:
        raise LedgerRuleError("a transfer needs at least two legs")
    totals: dict[str, int] = defaultdict(int)
    for leg in legs:
        if leg.amount == 0:
            raise LedgerRuleError("a leg cannot be zero")
        if leg.account_id not in currencies:
            raise LedgerRuleError(f"unknown account {leg.account_id}")
        totals[currencies[leg.account_id]] += leg.amount
    unbalanced = {c: t for c, t in totals.items() if t != 0}
    if unbalanced:
        raise LedgerRuleError(f"legs do not balance: {unbalanced}")


def net_by_account(legs: Iterable[Leg]) -> dict[int, int]:
    net: dict[int, int] = defaultdict(int)
    for leg in legs:
        net[leg.account_id] += leg.amount
    return {a: n for a, n in net.items() if n != 0}


def delta_of(entry: Entry) -> Delta:
    if entry.layer is Layer.POSTED:
        return Delta(posted=entry.amount)
    if entry.layer is Layer.PENDING_DEBIT:
        return Delta(pending_debits=-entry.amount)
    return Delta(pending_credits=entry.amount)


def deltas_by_shard(entries: Iterable[Entry]) -> dict[tuple[int, int], Delta]:
    """Sum the effect of entries per (account, shard): one balance update per row."""
    deltas: dict[tuple[int, int], Delta] = defaultdict(Delta)
    for entry in entries:
        deltas[(entry.account_id, entry.shard)] += delta_of(entry)
    return {k: d for k, d in deltas.items() if not d.is_zero}


def pending_layer(amount: int) -> Layer:
    return Layer.PENDING_DEBIT if amount < 0 else Layer.PENDING_CREDIT


def releases(pending_entries: Iterable[Entry]) -> list[Entry]:
    """Entries that undo a pending transfer's reservations, shard by shard."""
    return [Entry(e.account_id, e.shard, e.layer, -e.amount) for e in pending_entries]


def split_posting(pending_entries: Sequence[Entry], legs: Sequence[Leg]) -> list[Entry]:
    """Posted entries for resolving a pending transfer with `legs` (full or partial).

    Each account may be posted at most what it had pending, in the same direction, and the
    posted amounts are placed on the shards that held the reservation, so posting never needs
    funds beyond what was reserved.
    """
    reserved: dict[int, list[Entry]] = defaultdict(list)
    for entry in pending_entries:
        reserved[entry.account_id].append(entry)
    posted: list[Entry] = []
    for account_id, amount in net_by_account(legs).items():
        held = reserved.get(account_id)
        if not held:
            raise LedgerRuleError(f"account {account_id} was not part of the pending transfer")
        direction = -1 if amount < 0 else 1
        capacity = sum(e.amount for e in held)
        if capacity * direction <= 0 or abs(amount) > abs(capacity):
            raise LedgerRuleError(
                f"account {account_id}: cannot post {amount} against a reservation of {capacity}"
            )
        remaining = amount
        for entry in held:
            if remaining == 0:
                break
            take = direction * min(abs(remaining), abs(entry.amount))
            posted.append(Entry(account_id, entry.shard, Layer.POSTED, take))
            remaining -= take
    return posted
