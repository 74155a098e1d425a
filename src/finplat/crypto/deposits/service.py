"""Stablecoin deposits to pay-in addresses (issue 33, Deliver 2).

The rail reports each transfer it sees at an address it issued (`deposit.updated`, see
`finplat.providers.crypto.port`), again on every change. `apply_report` folds each report into
one `crypto_deposits` row, under that row's lock, so reports in any order, repeated or in
parallel, have one effect:

* A transfer of the pair the address was issued for (stablecoin and chain) is `PENDING` with
  the confirmations reported so far (they never go down) and the chain's threshold
  (`finality`). At the threshold it is `CREDITED`: settlement -> the user's crypto balance,
  `crypto.deposit.credited`, once.
* A transfer dropped by a reorganisation before its threshold is `REORGED`
  (`crypto.deposit.reorged`) and never credits, whatever is reported after. The platform
  offers no provisional credit, so nothing has to be taken back.
* A reorganisation reported after the credit contradicts the finality the platform relies on:
  the deposit stays `CREDITED`, the report is logged as an error for the operators, and the
  rail's balance no longer matching the ledger is what reconciliation shows.
* Any other token, another chain, or an address the platform did not issue is `UNSUPPORTED`
  (`crypto.deposit.unsupported`): recorded with everything needed to return it, never
  credited, never lost.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto import balances
from finplat.crypto.addresses.repository import PayinAddressRepository
from finplat.crypto.deposits import finality, topups
from finplat.crypto.deposits.models import CryptoDeposit, DepositStatus
from finplat.crypto.deposits.repository import DepositRepository
from finplat.crypto.networks import CURRENCIES
from finplat.errors import NotFound
from finplat.events import service as events
from finplat.kit.clock import utcnow
from finplat.kit.money import ExcessPrecision, from_minor, to_minor
from finplat.kit.pagination import PageRequest, PageSlice
from finplat.ledger import service as ledger
from finplat.ledger.core import MAX_BALANCE, Leg
from finplat.providers.crypto import addresses
from finplat.providers.crypto.port import Chain, ChainDepositStatus
from finplat.users import service as users

log = structlog.get_logger("finplat.crypto.deposits")
LEDGER_CODE = "crypto.deposit"
DOMAIN = "crypto"

NOT_ISSUED_FOR_PAIR = "The address was not issued for this token on this chain."
NOT_ISSUED = "The platform issued no such address."
UNSUPPORTED_AMOUNT = "The amount has more decimals than the token allows."
AMOUNT_OUT_OF_RANGE = "The amount is beyond what a balance can hold."


class DepositNotFound(NotFound):
    code = "DEPOSIT_NOT_FOUND"
    message = "No crypto deposit with that DepositId for this user."


@dataclass(frozen=True)
class Report:
    """One `deposit.updated` from the rail, already read and checked."""

    provider: str
    deposit_id: str
    tx_hash: str
    address: str
    chain_id: int
    token: str
    amount: Decimal
    confirmations: int
    status: ChainDepositStatus


def new_deposit_id() -> str:
    return f"cdp_{secrets.token_hex(12)}"


def canonical_address(address: str, chain_id: int) -> str:
    """How the platform stored the address it issued (EVM: checksummed)."""
    if chain_id != Chain.TRON.value and addresses.is_evm_address(address):
        return addresses.canonical(Chain.ETHEREUM, address)
    return address


async def apply_report(session: AsyncSession, *, company_id: int, report: Report) -> CryptoDeposit:
    repository = DepositRepository(session, company_id)
    address = canonical_address(report.address, report.chain_id)
    user_id, unsupported_reason, amount_minor = await _classify(
        session, company_id=company_id, report=report, address=address
    )
    inserted = await repository.insert_once(
        {
            "id": new_deposit_id(),
            "user_id": user_id,
            "provider": report.provider,
            "provider_deposit_id": report.deposit_id,
            "tx_hash": report.tx_hash,
            "address": address,
            "chain_id": report.chain_id,
            "currency": report.token,
            "amount": format(report.amount, "f"),
            "amount_minor": amount_minor,
            "confirmations": 0,
            "required_confirmations": (
                None if unsupported_reason else finality.required_confirmations(report.chain_id)
            ),
            "status": DepositStatus.UNSUPPORTED.value
            if unsupported_reason
            else DepositStatus.PENDING.value,
            "reason": unsupported_reason,
            "created_at": utcnow(),
            "updated_at": utcnow(),
        }
    )
    deposit = await repository.locked_by_provider_id(report.provider, report.deposit_id)
    if inserted:
        await _announce(session, deposit)
    if report.status is ChainDepositStatus.DROPPED:
        await _dropped(session, deposit)
        return deposit
    if report.confirmations > deposit.confirmations and deposit.status != DepositStatus.REORGED:
        deposit.confirmations = report.confirmations
        deposit.updated_at = utcnow()
    if deposit.status == DepositStatus.PENDING.value:
        required = finality.required_confirmations(deposit.chain_id)
        deposit.required_confirmations = required
        if required is not None and deposit.confirmations >= required:
            await _credit(session, deposit)
    await session.flush()
    return deposit


async def _classify(
    session: AsyncSession, *, company_id: int, report: Report, address: str
) -> tuple[int | None, str | None, int | None]:
    """(the address's holder, why the transfer cannot be credited or None, its minor units)."""
    issued = await PayinAddressRepository(session, company_id).by_address(address)
    if not issued:
        return None, NOT_ISSUED, None
    user_id = issued[0].user_id
    if not any(a.currency == report.token and a.chain_id == report.chain_id for a in issued):
        return user_id, NOT_ISSUED_FOR_PAIR, None
    if report.token not in CURRENCIES:  # an issued pair is always a supported one
        return user_id, NOT_ISSUED_FOR_PAIR, None
    try:
        minor = to_minor(report.amount, report.token)
    except ExcessPrecision:
        return user_id, UNSUPPORTED_AMOUNT, None
    if minor > MAX_BALANCE:  # no balance may hold it: kept for the operators, not credited
        return user_id, AMOUNT_OUT_OF_RANGE, None
    return user_id, None, minor


async def _announce(session: AsyncSession, deposit: CryptoDeposit) -> None:
    type_ = (
        "crypto.deposit.unsupported"
        if deposit.status == DepositStatus.UNSUPPORTED.value
        else "crypto.deposit.pending"
    )
    await _event(session, deposit, type_)


async def _dropped(session: AsyncSession, deposit: CryptoDeposit) -> None:
    if deposit.status == DepositStatus.CREDITED.value:
        log.error(
            "crypto_deposit_reorged_after_credit",
            deposit_id=deposit.id,
            chain_id=deposit.chain_id,
            confirmations=deposit.confirmations,
        )
        return
    if deposit.status == DepositStatus.REORGED.value:
        return
    deposit.status = DepositStatus.REORGED.value
    deposit.updated_at = utcnow()
    await session.flush()
    await _event(session, deposit, "crypto.deposit.reorged")


async def _credit(session: AsyncSession, deposit: CryptoDeposit) -> None:
    assert deposit.user_id is not None
    assert deposit.amount_minor is not None
    company_id = deposit.company_id
    accounts = await balances.with_settlement(
        session, company_id=company_id, user_id=deposit.user_id, currency=deposit.currency
    )
    wallet, settlement = accounts
    posted = await ledger.post_transfer(
        session,
        company_id=company_id,
        legs=[Leg(settlement.id, -deposit.amount_minor), Leg(wallet.id, deposit.amount_minor)],
        code=LEDGER_CODE,
        reference=deposit.id,
        details={"txHash": deposit.tx_hash, "chainId": deposit.chain_id},
        accounts=accounts,
    )
    now = utcnow()
    deposit.status = DepositStatus.CREDITED.value
    deposit.credited_at = now
    deposit.updated_at = now
    deposit.ledger_transfer_id = posted.transfer_id
    await topups.mark_due(session, deposit)
    await session.flush()
    await _event(session, deposit, "crypto.deposit.credited")


async def _event(session: AsyncSession, deposit: CryptoDeposit, type_: str) -> None:
    await events.record(
        session,
        company_id=deposit.company_id,
        type_=type_,
        domain=DOMAIN,
        data=event_data(deposit),
    )


def event_data(deposit: CryptoDeposit) -> dict[str, Any]:
    return {
        "depositId": deposit.id,
        "userId": deposit.user_id,
        "status": deposit.status,
        "currency": deposit.currency,
        "amount": amount_of(deposit),
        "chainId": deposit.chain_id,
        "address": deposit.address,
        "txHash": deposit.tx_hash,
        "confirmations": deposit.confirmations,
        "requiredConfirmations": deposit.required_confirmations,
        "reason": deposit.reason,
    }


def amount_of(deposit: CryptoDeposit) -> Decimal:
    if deposit.amount_minor is not None:
        return from_minor(deposit.amount_minor, deposit.currency)
    try:
        return Decimal(deposit.amount)
    except InvalidOperation:  # pragma: no cover - written from a Decimal
        return Decimal(0)


# ------------------------------------------------------------------------------------- reads


async def deposits_of(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    statuses: list[str],
    page: PageRequest,
) -> PageSlice[CryptoDeposit]:
    await users.get_user(session, company_id=company_id, user_id=user_id)
    return await DepositRepository(session, company_id).of_user(
        user_id, statuses=statuses, page=page
    )


async def deposit_of(
    session: AsyncSession, *, company_id: int, user_id: int, deposit_id: str
) -> CryptoDeposit:
    """The user's deposit (404 `DEPOSIT_NOT_FOUND` for another user's or company's)."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    deposit = await DepositRepository(session, company_id).find(deposit_id)
    if deposit is None or deposit.user_id != user_id:
        raise DepositNotFound()
    return deposit


async def by_provider_id(
    session: AsyncSession, *, company_id: int, provider: str, provider_id: str
) -> CryptoDeposit | None:
    return await DepositRepository(session, company_id).by_provider_id(provider, provider_id)
