"""Wallet withdrawals: a user's stablecoins sent to an external wallet (`bankprov-to-wallet`).

Initiate (one commit, a recovery point of the request's Idempotency-Key): the destination must
be an address of the chain (400), the user identity-verified (409 `KYC_NOT_APPROVED`), an
amount of at least the EDD threshold needs the user's EDD (409 `EDD_REQUIRED`). The rail's
network fee is quoted, the amount and the fee are reserved in the ledger (crypto balance ->
settlement, two pending transfers: `crypto.wallet_withdrawal` and `crypto.network_fee`; 409
`INSUFFICIENT_FUNDS` rolls it all back), and a `WALLET_WITHDRAWAL` transfer waits
`PENDING_VERIFICATION` for a six-digit code emailed to the user (only its keyed hash is kept).

Confirm, under the transfer's row lock (parallel confirms run one after the other): a code
past its `CODE_LIFETIME` expires the withdrawal (409 `VERIFICATION_EXPIRED`, released); a
wrong one is 403 `INVALID_VERIFICATION_CODE`, the fifth wrong one fails it (409
`WITHDRAWAL_LOCKED`, released). The right one moves it on once: to `COOLING_OFF` until
`release_at` when the user never sent to that address on that chain before (and the
configured cooling-off is not zero), else to `PENDING`, committed before the rail is called.
A confirm that finds the withdrawal past `PENDING_VERIFICATION` answers it as it stands.

Broadcast: the rail is given the transfer's own key (`provider_key`, unique per provider), so
whatever calls it (the confirm, its retry, a read, the job, reconciliation) the rail sends
once. Its answer: `BROADCAST` keeps the transfer `PENDING` with the transaction hash;
`CONFIRMED` posts both reservations (`COMPLETED`); `FAILED` or a refusal releases them
(`FAILED`); no answer leaves it `PENDING`, found later by its key.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.crypto import balances
from finplat.crypto.addresses.service import NO_CRYPTO
from finplat.crypto.edd import service as edd
from finplat.crypto.transfers.models import CryptoTransfer, TransferKind, TransferStatus
from finplat.crypto.transfers.repository import TransferRepository
from finplat.crypto.withdrawals import codes, repository
from finplat.crypto.withdrawals.models import CryptoWalletWithdrawal
from finplat.crypto.withdrawals.repository import WithdrawalRepository
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError, Conflict, NotFound, ValidationFailed
from finplat.events import service as events
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money, from_minor
from finplat.kyc import approval
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import TransferAlreadyResolved
from finplat.providers.calls import commit_then_call
from finplat.providers.crypto import addresses
from finplat.providers.crypto.port import Chain
from finplat.providers.crypto.withdrawals import (
    WalletWithdrawals,
    Withdrawal,
    WithdrawalStatus,
)
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.messaging.port import CodeMailer
from finplat.providers.names import ExternalProvider
from finplat.providers.registry import Providers, configured
from finplat.users import service as users

log = structlog.get_logger("finplat.crypto.withdrawals")
CODE_LIFETIME = timedelta(minutes=10)
MAX_ATTEMPTS = 5
LEDGER_CODE = "crypto.wallet_withdrawal"
FEE_LEDGER_CODE = "crypto.network_fee"
CODE_SENT = "code_sent"
VERIFIED = "verified"
DOMAIN = "crypto"
NO_MAILER = "No email provider is configured."


class WithdrawalNotFound(NotFound):
    code = "TRANSFER_NOT_FOUND"
    message = "No wallet withdrawal with that TransferId for this user."


class InvalidVerificationCode(ApiError):
    status = 403
    code = "INVALID_VERIFICATION_CODE"
    message = "The code is not the one sent for this withdrawal."


class WithdrawalLocked(Conflict):
    code = "WITHDRAWAL_LOCKED"
    message = "Too many wrong codes: the withdrawal failed and its amount was released."


class VerificationExpired(Conflict):
    code = "VERIFICATION_EXPIRED"
    message = "The code has expired: the withdrawal was cancelled and its amount released."


class WithdrawalsUnsupported(ApiError):
    status = 503
    code = "PROVIDER_UNAVAILABLE"
    message = "The crypto rail does not send to external wallets."


@dataclass(frozen=True)
class WalletWithdrawal:
    transfer: CryptoTransfer
    withdrawal: CryptoWalletWithdrawal


def new_transfer_id() -> str:
    return f"ctr_{secrets.token_hex(12)}"


def _rail(providers: Providers) -> WalletWithdrawals:
    rail = configured(providers.crypto, NO_CRYPTO)
    if not isinstance(rail, WalletWithdrawals):
        raise WithdrawalsUnsupported()
    return rail


def destination(chain: Chain, address: str) -> str:
    """The address in its canonical spelling; 400 naming `DestinationAddress` if it is not an
    address of the chain (wrong format, or a checksum that does not hold)."""
    text = address.strip()
    if not addresses.is_valid(chain, text):
        expected = (
            "a base58check Tron address (T...)"
            if chain is Chain.TRON
            else "a 0x address of 40 hex digits (EIP-55 checksum if mixed case)"
        )
        raise ValidationFailed(
            validation_errors={"DestinationAddress": [f"Must be {expected} on {chain.name}."]}
        )
    return addresses.canonical(chain, text)


# ---------------------------------------------------------------------------------- initiate


async def initiate(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    user_id: int,
    money: Money,
    chain: Chain,
    address: str,
    edd_threshold: Decimal,
    code_key: bytes,
) -> WalletWithdrawal:
    """Reserve the amount and its network fee and email the code (see the module)."""
    if claim.recovery_point != idempotency.STARTED:
        return await _resume_initiate(
            session, providers, claim=claim, company_id=company_id, code_key=code_key
        )
    to = destination(chain, address)
    user = await approval.require_base_approval(session, company_id=company_id, user_id=user_id)
    await edd.require_for(
        session,
        company_id=company_id,
        user_id=user_id,
        amount=money.amount,
        threshold=edd_threshold,
    )
    rail = _rail(providers)
    mailer = configured(providers.mailer, NO_MAILER)
    coin = money.currency
    fee = await commit_then_call(
        session,
        providers.policy,
        provider=ExternalProvider.CRYPTO.value,
        operation="network_fee",
        call=lambda: rail.network_fee(company_id=company_id, currency=coin, chain_id=chain.value),
        idempotent=True,  # a read
    )
    transfer_id = new_transfer_id()
    accounts = await balances.with_settlement(
        session, company_id=company_id, user_id=user_id, currency=coin
    )
    wallet, settlement = accounts
    principal = await ledger.create_pending(
        session,
        company_id=company_id,
        legs=[Leg(wallet.id, -money.minor), Leg(settlement.id, money.minor)],
        code=LEDGER_CODE,
        expires_at=None,  # released by the withdrawal's own expiry, failure or lock
        reference=transfer_id,
        accounts=accounts,
    )
    network_fee = await ledger.create_pending(
        session,
        company_id=company_id,
        legs=[Leg(wallet.id, -fee), Leg(settlement.id, fee)],
        code=FEE_LEDGER_CODE,
        expires_at=None,
        reference=transfer_id,
        accounts=accounts,
    )
    code = codes.new_code()
    now = utcnow()
    transfer = await TransferRepository(session, company_id).add(
        CryptoTransfer(
            id=transfer_id,
            user_id=user_id,
            kind=TransferKind.WALLET_WITHDRAWAL.value,
            status=TransferStatus.PENDING_VERIFICATION.value,
            provider=ExternalProvider.CRYPTO.value,
            provider_key=f"wallet-withdrawal:{transfer_id}",
            currency=coin,
            amount_minor=money.minor + fee,
            fee_minor=fee,
            ledger_pending_id=principal.transfer_id,
        )
    )
    withdrawal = await WithdrawalRepository(session, company_id).add(
        CryptoWalletWithdrawal(
            transfer_id=transfer_id,
            user_id=user_id,
            chain_id=chain.value,
            address=to,
            code_hash=codes.code_hash(code_key, transfer_id, code),
            code_expires_at=now + CODE_LIFETIME,
            failed_attempts=0,
            fee_pending_id=network_fee.transfer_id,
        )
    )
    await _event(session, transfer, withdrawal, "crypto.wallet_withdrawal.pending_verification")
    await idempotency.checkpoint(session, claim, CODE_SENT, transfer_id=transfer_id)
    await _send_code(session, providers, mailer, transfer_id, company_id, user.email, code)
    return await _reread(session, company_id, transfer_id)


async def _resume_initiate(
    session: AsyncSession, providers: Providers, *, claim: Claim, company_id: int, code_key: bytes
) -> WalletWithdrawal:
    """A retried initiate whose withdrawal was made: a code whose email may not have gone is
    replaced by a new one, sent now (only its hash is kept, so the first cannot be resent)."""
    transfer_id = str(claim.state["transfer_id"])
    await idempotency.checkpoint(session, claim, claim.recovery_point)
    found = await _locked(session, company_id, transfer_id)
    if found.transfer.status != TransferStatus.PENDING_VERIFICATION.value:
        return found
    mailer = configured(providers.mailer, NO_MAILER)
    user = await users.get_user(session, company_id=company_id, user_id=found.transfer.user_id)
    code = codes.new_code()
    found.withdrawal.code_hash = codes.code_hash(code_key, transfer_id, code)
    await session.flush()
    await _send_code(session, providers, mailer, transfer_id, company_id, user.email, code)
    return await _reread(session, company_id, transfer_id)


async def _send_code(
    session: AsyncSession,
    providers: Providers,
    mailer: CodeMailer,
    transfer_id: str,
    company_id: int,
    email: str,
    code: str,
) -> None:
    await commit_then_call(
        session,
        providers.policy,
        provider=mailer.name,
        operation="send_code",
        call=lambda: mailer.send_code(
            company_id=company_id, reference=transfer_id, email=email, code=code
        ),
        idempotent=True,
    )


# ----------------------------------------------------------------------------------- confirm


async def confirm(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    user_id: int,
    transfer_id: str,
    code: str,
    code_key: bytes,
    cooling_off: timedelta,
) -> WalletWithdrawal:
    """Check the code and send the withdrawal once (see the module)."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    if claim.recovery_point == VERIFIED:
        await idempotency.checkpoint(session, claim, VERIFIED)
        found = await _reread(session, company_id, transfer_id)
        await _broadcast(session, providers, found.transfer)
        return await _reread(session, company_id, transfer_id)
    found = await _locked(session, company_id, transfer_id)
    transfer, withdrawal = found.transfer, found.withdrawal
    if transfer.user_id != user_id:
        raise WithdrawalNotFound()
    if transfer.status != TransferStatus.PENDING_VERIFICATION.value:
        return found
    now = utcnow()
    if now >= withdrawal.code_expires_at:
        await _release(session, found, TransferStatus.EXPIRED, "The code was not given in time.")
        await session.commit()
        raise VerificationExpired()
    if not codes.matches(code_key, transfer.id, code, withdrawal.code_hash):
        await WithdrawalRepository(session, company_id).count_failed_attempt(transfer.id)
        if withdrawal.failed_attempts + 1 >= MAX_ATTEMPTS:
            await _release(session, found, TransferStatus.FAILED, "Too many wrong codes.")
            await session.commit()
            raise WithdrawalLocked()
        await session.commit()
        left = MAX_ATTEMPTS - withdrawal.failed_attempts - 1
        raise InvalidVerificationCode(
            f"The code is not the one sent for this withdrawal; {left} attempt(s) left."
        )
    withdrawal.verified_at = now
    used = await WithdrawalRepository(session, company_id).destination_used(
        user_id=user_id,
        chain_id=withdrawal.chain_id,
        address=withdrawal.address,
        other_than=transfer.id,
    )
    if not used and cooling_off > timedelta(0):
        withdrawal.release_at = now + cooling_off
        transfer.status = TransferStatus.COOLING_OFF.value
        await session.flush()
        await _event(session, transfer, withdrawal, "crypto.wallet_withdrawal.cooling_off")
        await session.commit()
        return await _reread(session, company_id, transfer_id)
    await _send(session, found)
    await idempotency.checkpoint(session, claim, VERIFIED, transfer_id=transfer_id)
    await _broadcast(session, providers, transfer)
    return await _reread(session, company_id, transfer_id)


async def _send(session: AsyncSession, found: WalletWithdrawal) -> None:
    """Verified and clear of any cooling-off: `PENDING`, to be sent to the rail."""
    found.transfer.status = TransferStatus.PENDING.value
    await session.flush()
    await _event(session, found.transfer, found.withdrawal, "crypto.wallet_withdrawal.pending")


async def _broadcast(session: AsyncSession, providers: Providers, transfer: CryptoTransfer) -> None:
    """Hand the withdrawal to the rail with its own key and apply the answer (the rail sends
    once per key, whoever calls)."""
    if transfer.status != TransferStatus.PENDING.value:
        return
    rail = _rail(providers)
    company_id, transfer_id, key = transfer.company_id, transfer.id, transfer.provider_key
    withdrawal = await WithdrawalRepository(session, company_id).find(transfer_id)
    assert withdrawal is not None
    coin, chain_id, address = transfer.currency, withdrawal.chain_id, withdrawal.address
    amount = transfer.amount_minor - transfer.fee_minor
    try:
        sent = await commit_then_call(
            session,
            providers.policy,
            provider=ExternalProvider.CRYPTO.value,
            operation="withdraw",
            call=lambda: rail.withdraw(
                company_id=company_id,
                idempotency_key=key,
                currency=coin,
                chain_id=chain_id,
                address=address,
                amount_minor=amount,
            ),
            idempotent=True,  # it carries the transfer's own key
        )
    except ProviderRejected as exc:
        found = await _locked(session, company_id, transfer_id)
        if found.transfer.status == TransferStatus.PENDING.value:
            await _release(session, found, TransferStatus.FAILED, exc.message)
        await session.commit()
        return
    except ProviderUnavailable:
        log.warning("crypto_withdrawal_outcome_unknown", transfer_id=transfer_id)
        return
    found = await _locked(session, company_id, transfer_id)
    await apply(session, found=found, sent=sent)
    await session.commit()


async def apply(session: AsyncSession, *, found: WalletWithdrawal, sent: Withdrawal) -> None:
    """What the rail says about the withdrawal; the caller holds the transfer's lock."""
    transfer, withdrawal = found.transfer, found.withdrawal
    if transfer.provider_reference is None:
        transfer.provider_reference = sent.withdrawal_id
    if withdrawal.tx_hash is None and sent.tx_hash:
        withdrawal.tx_hash = sent.tx_hash
    if transfer.status != TransferStatus.PENDING.value:
        await session.flush()
        return
    if sent.status is WithdrawalStatus.CONFIRMED:
        assert transfer.ledger_pending_id is not None
        try:
            for pending_id in (transfer.ledger_pending_id, withdrawal.fee_pending_id):
                await ledger.post_pending(
                    session, company_id=transfer.company_id, pending_id=pending_id
                )
        except TransferAlreadyResolved:
            return
        transfer.status = TransferStatus.COMPLETED.value
        transfer.completed_at = utcnow()
        await session.flush()
        await _event(session, transfer, withdrawal, "crypto.wallet_withdrawal.completed")
    elif sent.status is WithdrawalStatus.FAILED:
        await _release(session, found, TransferStatus.FAILED, sent.reason or "The rail failed.")
    await session.flush()


async def _release(
    session: AsyncSession, found: WalletWithdrawal, status: TransferStatus, reason: str
) -> None:
    """Give the amount and the fee back (both reservations voided) and end the withdrawal."""
    transfer, withdrawal = found.transfer, found.withdrawal
    assert transfer.ledger_pending_id is not None
    try:
        for pending_id in (transfer.ledger_pending_id, withdrawal.fee_pending_id):
            await ledger.void_pending(
                session,
                company_id=transfer.company_id,
                pending_id=pending_id,
                details={"reason": reason[:200]},
            )
    except TransferAlreadyResolved:
        return
    transfer.status = status.value
    transfer.reason = reason[:200]
    transfer.completed_at = utcnow()
    await session.flush()
    await _event(session, transfer, withdrawal, f"crypto.wallet_withdrawal.{status.value.lower()}")


# ----------------------------------------------------------------------- refresh and the job


async def refresh(session: AsyncSession, providers: Providers, *, transfer: CryptoTransfer) -> None:
    """Move a withdrawal on where time or the rail says so: an expired code expires it, an
    elapsed cooling-off sends it, a `PENDING` one is asked of the rail by key (and sent if
    the rail never got it). Raises the rail's failure."""
    company_id, transfer_id = transfer.company_id, transfer.id
    status = transfer.status
    if status == TransferStatus.PENDING_VERIFICATION.value:
        found = await _locked(session, company_id, transfer_id)
        if (
            found.transfer.status == TransferStatus.PENDING_VERIFICATION.value
            and utcnow() >= found.withdrawal.code_expires_at
        ):
            await _release(
                session, found, TransferStatus.EXPIRED, "The code was not given in time."
            )
            await session.commit()
        return
    if status == TransferStatus.COOLING_OFF.value:
        found = await _locked(session, company_id, transfer_id)
        release_at = found.withdrawal.release_at
        if found.transfer.status != TransferStatus.COOLING_OFF.value or (
            release_at is not None and utcnow() < release_at
        ):
            return
        await _send(session, found)
        await session.commit()
        await _broadcast(session, providers, found.transfer)
        return
    if status != TransferStatus.PENDING.value:
        return
    rail, key = _rail(providers), transfer.provider_key
    sent = await commit_then_call(
        session,
        providers.policy,
        provider=ExternalProvider.CRYPTO.value,
        operation="withdrawal_by_key",
        call=lambda: rail.withdrawal_by_key(company_id=company_id, idempotency_key=key),
        idempotent=True,
    )
    if sent is None:
        pending = await TransferRepository(session, company_id).find(transfer_id)
        assert pending is not None
        await _broadcast(session, providers, pending)
        return
    found = await _locked(session, company_id, transfer_id)
    await apply(session, found=found, sent=sent)
    await session.commit()


async def settle_by_key(
    session: AsyncSession, *, company_id: int, provider: str, key: str, sent: Withdrawal
) -> None:
    """The rail's `withdrawal.updated`, applied under the transfer's lock."""
    transfer = await TransferRepository(session, company_id).by_provider_key(
        provider, key, lock=True
    )
    if transfer is None or transfer.kind != TransferKind.WALLET_WITHDRAWAL.value:
        log.warning("crypto_withdrawal_for_unknown_transfer", withdrawal=sent.withdrawal_id)
        return
    withdrawal = await WithdrawalRepository(session, company_id).find(transfer.id, lock=True)
    assert withdrawal is not None
    await apply(session, found=WalletWithdrawal(transfer, withdrawal), sent=sent)


async def run_due(
    factory: async_sessionmaker[AsyncSession], providers: Providers, *, limit: int = 200
) -> int:
    """Expire the withdrawals whose code was not given in time and send those whose
    cooling-off is over; one unit of work each. Answers how many it moved."""
    async with unit_of_work(factory) as session:
        due = await repository.due(session, now=utcnow(), limit=limit)
    moved = 0
    for company_id, transfer_id in due:
        try:
            async with unit_of_work(factory) as session:
                bind_company(session, company_id)
                transfer = await TransferRepository(session, company_id).find(transfer_id)
                if transfer is not None:
                    await refresh(session, providers, transfer=transfer)
                    moved += 1
        except ApiError as exc:
            log.warning("crypto_withdrawal_due_failed", transfer_id=transfer_id, code=exc.code)
    return moved


# ------------------------------------------------------------------------------------- reads


async def withdrawal_of(
    session: AsyncSession, *, company_id: int, transfer_id: str
) -> CryptoWalletWithdrawal | None:
    return await WithdrawalRepository(session, company_id).find(transfer_id)


async def _locked(session: AsyncSession, company_id: int, transfer_id: str) -> WalletWithdrawal:
    transfer = await TransferRepository(session, company_id).find(transfer_id, lock=True)
    if transfer is None or transfer.kind != TransferKind.WALLET_WITHDRAWAL.value:
        raise WithdrawalNotFound()
    withdrawal = await WithdrawalRepository(session, company_id).find(transfer_id, lock=True)
    assert withdrawal is not None
    return WalletWithdrawal(transfer, withdrawal)


async def _reread(session: AsyncSession, company_id: int, transfer_id: str) -> WalletWithdrawal:
    transfer = await TransferRepository(session, company_id).find(transfer_id)
    withdrawal = await WithdrawalRepository(session, company_id).find(transfer_id)
    assert transfer is not None
    assert withdrawal is not None
    await session.refresh(transfer)
    return WalletWithdrawal(transfer, withdrawal)


async def _event(
    session: AsyncSession,
    transfer: CryptoTransfer,
    withdrawal: CryptoWalletWithdrawal,
    type_: str,
) -> None:
    await events.record(
        session,
        company_id=transfer.company_id,
        type_=type_,
        domain=DOMAIN,
        data={
            "transferId": transfer.id,
            "userId": transfer.user_id,
            "kind": transfer.kind,
            "status": transfer.status,
            "currency": transfer.currency,
            "amount": from_minor(transfer.amount_minor - transfer.fee_minor, transfer.currency),
            "networkFee": from_minor(transfer.fee_minor, transfer.currency),
            "chainId": withdrawal.chain_id,
            "destinationAddress": withdrawal.address,
            "txHash": withdrawal.tx_hash,
            "releaseAt": release_text(withdrawal.release_at),
            "reason": transfer.reason,
        },
    )


def release_text(at: datetime | None) -> str | None:
    return at.isoformat() if at is not None else None


async def get(
    session: AsyncSession, *, company_id: int, user_id: int, transfer_id: str
) -> WalletWithdrawal:
    """The user's withdrawal as stored (404 for another user's or another kind)."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    transfer = await TransferRepository(session, company_id).find(transfer_id)
    if (
        transfer is None
        or transfer.user_id != user_id
        or transfer.kind != TransferKind.WALLET_WITHDRAWAL.value
    ):
        raise WithdrawalNotFound()
    return await _reread(session, company_id, transfer_id)
