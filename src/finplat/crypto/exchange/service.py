"""Crypto to fiat: exchange quotes, their acceptance, and the `bankprov-deposits` it starts
(issue 33, Deliver 3).

Quote: the user's stablecoin `Amount` priced in a fiat currency of one of the user's banking
budgets, at the rail's rate, for `QUOTE_LIFETIME`. The platform's fee is 0.5 % of the amount,
rounded up to the coin's cent and taken in the coin; the rest is sold, and the budget receives
it at the rate rounded down to the fiat cent (`FiatAmount`).

Accept (the same operation as `POST /bankprov-deposits`), in phases, each a recovery point of
the request's Idempotency-Key:
  started  -> accept the quote (OPEN -> ACCEPTED, one conditional UPDATE: of parallel accepts
              one wins, the others are 409), reserve the amount (crypto balance -> settlement
              and fee revenue, pending; 409 `INSUFFICIENT_FUNDS` rolls it all back), record a
              `PENDING` transfer carrying the rail's key: one commit
  reserved -> the rail starts the conversion with that key (a retry gets its first answer):
              pending -> stays `PENDING` until the rail's `conversion.updated`; refused ->
              released, `FAILED`; no answer -> stays `PENDING`, found later by its key.
The rail's outcome: `COMPLETED` posts the reservation (the fiat reaches the budget through the
banking provider's own incoming payment); `FAILED` releases it. Each is settled once, under
the transfer's lock.
"""

from __future__ import annotations

import secrets
from decimal import ROUND_CEILING, ROUND_DOWN, Decimal

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts
from finplat.crypto import balances
from finplat.crypto.addresses.service import NO_CRYPTO
from finplat.crypto.edd import service as edd
from finplat.crypto.exchange.models import CryptoExchangeQuote, QuoteStatus
from finplat.crypto.exchange.repository import ExchangeQuoteRepository
from finplat.crypto.transfers.models import CryptoTransfer, TransferKind, TransferStatus
from finplat.crypto.transfers.repository import TransferRepository
from finplat.crypto.withdrawals import service as withdrawals
from finplat.errors import ApiError, Conflict, NotFound
from finplat.events import service as events
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money, exponent, from_minor
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount, TransferAlreadyResolved
from finplat.providers.calls import commit_then_call
from finplat.providers.crypto.port import CoinSource, Conversion, ConversionStatus
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.names import ExternalProvider
from finplat.providers.registry import Providers, configured
from finplat.users import service as users

log = structlog.get_logger("finplat.crypto.exchange")
FEE_RATE = Decimal("0.005")
LEDGER_CODE = "crypto.bankprov_deposit"
RESERVED = "reserved"
REJECTED = "rejected"
DOMAIN = "crypto"


class QuoteNotFound(NotFound):
    code = "QUOTE_NOT_FOUND"
    message = "No exchange quote with that QuoteId for this user."


class QuoteExpired(Conflict):
    code = "QUOTE_EXPIRED"
    message = "The quote has expired; ask for a new one."


class QuoteAlreadyAccepted(Conflict):
    code = "QUOTE_ALREADY_ACCEPTED"
    message = "The quote was already accepted; ask for a new one."


class TransferNotFound(NotFound):
    code = "TRANSFER_NOT_FOUND"
    message = "No crypto transfer with that TransferId for this user."


class ConversionRejected(ApiError):
    """The rail's refusal, replayed when the refused acceptance is resumed."""


def new_quote_id() -> str:
    return f"cxq_{secrets.token_hex(12)}"


def new_transfer_id() -> str:
    return f"ctr_{secrets.token_hex(12)}"


def fee_of(money: Money) -> int:
    """0.5 % of the amount, rounded up to the coin's cent (in minor units)."""
    cent = int(10 ** (exponent(money.currency) - 2))
    raw = Decimal(money.minor) * FEE_RATE / cent
    return int(raw.to_integral_value(rounding=ROUND_CEILING)) * cent


def fiat_for(net_minor: int, currency: str, fiat_currency: str, rate: Decimal) -> int:
    """What `net_minor` of the coin buys at `rate`, rounded down to the fiat's minor unit."""
    coins = from_minor(net_minor, currency)
    fiat = (coins * rate).quantize(Decimal(1).scaleb(-exponent(fiat_currency)), ROUND_DOWN)
    return int(fiat.scaleb(exponent(fiat_currency)).to_integral_value())


# ------------------------------------------------------------------------------------ quotes


async def quote(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    money: Money,
    fiat_currency: str,
    budget_id: str,
    edd_threshold: Decimal,
) -> CryptoExchangeQuote:
    """Price the sale (see the module). An amount of at least `edd_threshold` needs the
    user's EDD (409 `EDD_REQUIRED`)."""
    budget = await accounts.user_budget(
        session, company_id=company_id, user_id=user_id, budget_id=budget_id
    )
    await accounts.banking_account(session, company_id=company_id, user_id=user_id)
    await accounts.budget_balance(
        session, company_id=company_id, budget=budget, currency=fiat_currency
    )
    await edd.require_for(
        session,
        company_id=company_id,
        user_id=user_id,
        amount=money.amount,
        threshold=edd_threshold,
    )
    rail = configured(providers.crypto, NO_CRYPTO)
    priced = await commit_then_call(
        session,
        providers.policy,
        provider=rail.name,
        operation="quote_conversion",
        call=lambda: rail.quote_conversion(
            company_id=company_id, currency=money.currency, fiat_currency=fiat_currency
        ),
        idempotent=True,  # a read
    )
    fee = fee_of(money)
    fiat = fiat_for(money.minor - fee, money.currency, fiat_currency, priced.rate)
    return await ExchangeQuoteRepository(session, company_id).add(
        CryptoExchangeQuote(
            id=new_quote_id(),
            user_id=user_id,
            budget_id=budget.id,
            currency=money.currency,
            amount_minor=money.minor,
            fee_minor=fee,
            fiat_currency=fiat_currency,
            fiat_amount_minor=fiat,
            rate=str(priced.rate),
            expires_at=priced.expires_at,
            status=QuoteStatus.OPEN.value,
        )
    )


async def quote_of(
    session: AsyncSession, *, company_id: int, user_id: int, quote_id: str
) -> CryptoExchangeQuote:
    await users.get_user(session, company_id=company_id, user_id=user_id)
    found = await ExchangeQuoteRepository(session, company_id).find(quote_id)
    if found is None or found.user_id != user_id:
        raise QuoteNotFound()
    return found


# ------------------------------------------------------------------------------------ accept


async def accept(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    quote: CryptoExchangeQuote,
) -> CryptoTransfer:
    """Accept the quote once and start its conversion (see the module's phases)."""
    configured(providers.crypto, NO_CRYPTO)
    if claim.recovery_point == idempotency.STARTED:
        reserved = await _reserve(session, claim=claim, company_id=company_id, quote=quote)
        await idempotency.checkpoint(session, claim, RESERVED, transfer_id=reserved.id)
    else:
        # Resuming: commit the key takeover so no lock is held across the rail's call.
        await idempotency.checkpoint(session, claim, claim.recovery_point)
    if claim.recovery_point == REJECTED:
        refusal = claim.state.get("refusal") or {}
        raise ConversionRejected(
            refusal.get("message"), status=refusal.get("status"), code=refusal.get("code")
        )
    repository = TransferRepository(session, company_id)
    transfer = await repository.find(str(claim.state["transfer_id"]))
    assert transfer is not None
    try:
        conversion = await convert(session, providers, transfer=transfer)
    except ProviderRejected as exc:
        locked = await repository.find(transfer.id, lock=True)
        assert locked is not None
        await fail(session, transfer=locked, reason=exc.message)
        await idempotency.checkpoint(
            session,
            claim,
            REJECTED,
            refusal={"status": exc.status, "code": exc.code, "message": exc.message},
        )
        raise
    except ProviderUnavailable:
        # Uncertain: the rail may have started it. It stays PENDING; a read finds it by key.
        log.warning("crypto_conversion_outcome_unknown", transfer_id=transfer.id)
    else:
        locked = await repository.find(transfer.id, lock=True)
        assert locked is not None
        await apply(session, transfer=locked, conversion=conversion)
    found = await repository.find(transfer.id)
    assert found is not None
    return found


async def convert(
    session: AsyncSession, providers: Providers, *, transfer: CryptoTransfer
) -> Conversion:
    """Ask the rail to sell the transfer's coins (less its fee) for its fiat into its budget,
    under the transfer's key (a repeat answers the first conversion). Commits first; raises
    the rail's refusal or unavailability."""
    rail = configured(providers.crypto, NO_CRYPTO)
    assert transfer.budget_id is not None
    assert transfer.fiat_currency is not None
    assert transfer.fiat_amount_minor is not None
    budget = await accounts.find_budget(
        session, company_id=transfer.company_id, budget_id=transfer.budget_id
    )
    assert budget is not None
    company_id, key = transfer.company_id, transfer.provider_key
    destination = budget.provider_budget_id
    currency, net = transfer.currency, transfer.amount_minor - transfer.fee_minor
    fiat_currency, fiat_amount = transfer.fiat_currency, transfer.fiat_amount_minor
    source = (
        CoinSource.CARD_PROVIDER
        if transfer.kind == TransferKind.CARDPROV_TO_BANKPROV.value
        else CoinSource.CUSTODY
    )
    return await commit_then_call(
        session,
        providers.policy,
        provider=rail.name,
        operation="convert",
        call=lambda: rail.convert(
            company_id=company_id,
            idempotency_key=key,
            currency=currency,
            amount_minor=net,
            fiat_currency=fiat_currency,
            fiat_amount_minor=fiat_amount,
            destination_budget_id=destination,
            source=source,
        ),
        idempotent=True,  # it carries the rail's key
    )


async def _reserve(
    session: AsyncSession, *, claim: Claim, company_id: int, quote: CryptoExchangeQuote
) -> CryptoTransfer:
    transfer_id = new_transfer_id()
    quotes = ExchangeQuoteRepository(session, company_id)
    if not await quotes.accept(quote.id, transfer_id=transfer_id, now=utcnow()):
        current = await quotes.find(quote.id)
        if current is not None and current.status == QuoteStatus.ACCEPTED.value:
            raise QuoteAlreadyAccepted()
        raise QuoteExpired()
    coin = quote.currency
    accounts = await balances.with_settlement(
        session,
        company_id=company_id,
        user_id=quote.user_id,
        currency=coin,
        also=[CompanyAccount.FEE_REVENUE] if quote.fee_minor else [],
    )
    wallet, settlement = accounts[:2]
    legs = [Leg(wallet.id, -quote.amount_minor), Leg(settlement.id, quote.amount_minor)]
    if quote.fee_minor:
        revenue = accounts[2]
        legs = [
            Leg(wallet.id, -quote.amount_minor),
            Leg(settlement.id, quote.amount_minor - quote.fee_minor),
            Leg(revenue.id, quote.fee_minor),
        ]
    pending = await ledger.create_pending(
        session,
        company_id=company_id,
        legs=legs,
        code=LEDGER_CODE,
        expires_at=None,  # until the rail's answer settles it
        reference=transfer_id,
        accounts=accounts,
    )
    transfer = await TransferRepository(session, company_id).add(
        CryptoTransfer(
            id=transfer_id,
            user_id=quote.user_id,
            kind=TransferKind.BANKPROV_DEPOSIT.value,
            status=TransferStatus.PENDING.value,
            provider=ExternalProvider.CRYPTO.value,
            provider_key=claim.derived_key("crypto-conversion"),
            currency=coin,
            amount_minor=quote.amount_minor,
            fee_minor=quote.fee_minor,
            rate=quote.rate,
            fiat_currency=quote.fiat_currency,
            fiat_amount_minor=quote.fiat_amount_minor,
            budget_id=quote.budget_id,
            quote_id=quote.id,
            ledger_pending_id=pending.transfer_id,
        )
    )
    await record_event(session, transfer, "pending")
    return transfer


# -------------------------------------------------------------------------------- settlement


async def apply(session: AsyncSession, *, transfer: CryptoTransfer, conversion: Conversion) -> None:
    """What the rail says about the conversion; the caller holds the transfer's lock."""
    if transfer.provider_reference is None:
        transfer.provider_reference = conversion.conversion_id
    if conversion.status is ConversionStatus.COMPLETED:
        await complete(session, transfer=transfer)
    elif conversion.status is ConversionStatus.FAILED:
        reason = conversion.reason or "The rail failed."
        if transfer.kind == TransferKind.CARDPROV_TO_BANKPROV.value:
            # Imported here: that flow builds on this module's conversion. Its money goes
            # back onto the card, which needs the card provider (its next step).
            from finplat.crypto.cardprov_to_bankprov import service as card_to_bank

            await card_to_bank.conversion_failed(session, transfer=transfer, reason=reason)
        else:
            await fail(session, transfer=transfer, reason=reason)
    await session.flush()


async def complete(session: AsyncSession, *, transfer: CryptoTransfer) -> bool:
    if transfer.status != TransferStatus.PENDING.value:
        return False
    assert transfer.ledger_pending_id is not None
    try:
        await ledger.post_pending(
            session, company_id=transfer.company_id, pending_id=transfer.ledger_pending_id
        )
    except TransferAlreadyResolved:
        return False
    transfer.status = TransferStatus.COMPLETED.value
    transfer.completed_at = utcnow()
    await session.flush()
    await record_event(session, transfer, "completed")
    return True


async def fail(session: AsyncSession, *, transfer: CryptoTransfer, reason: str) -> bool:
    if transfer.status != TransferStatus.PENDING.value:
        return False
    assert transfer.ledger_pending_id is not None
    try:
        await ledger.void_pending(
            session,
            company_id=transfer.company_id,
            pending_id=transfer.ledger_pending_id,
            details={"reason": reason[:200]},
        )
    except TransferAlreadyResolved:
        return False
    transfer.status = TransferStatus.FAILED.value
    transfer.reason = reason[:200]
    transfer.completed_at = utcnow()
    await session.flush()
    await record_event(session, transfer, "failed")
    return True


# Each flow's events: `<prefix>.pending`, `.completed`, `.failed`.
EVENT_PREFIX = {
    TransferKind.BANKPROV_DEPOSIT.value: "crypto.bankprov_deposit",
    TransferKind.BANKPROV_TO_CARDPROV.value: "crypto.bankprov_to_cardprov",
    TransferKind.CARDPROV_TO_BANKPROV.value: "crypto.cardprov_to_bankprov",
}


async def record_event(session: AsyncSession, transfer: CryptoTransfer, state: str) -> None:
    await events.record(
        session,
        company_id=transfer.company_id,
        type_=f"{EVENT_PREFIX[transfer.kind]}.{state}",
        domain=DOMAIN,
        data={
            "transferId": transfer.id,
            "userId": transfer.user_id,
            "kind": transfer.kind,
            "status": transfer.status,
            "currency": transfer.currency,
            "amount": from_minor(transfer.amount_minor, transfer.currency),
            "fee": from_minor(transfer.fee_minor, transfer.currency),
            "exchangeRate": transfer.rate,
            "fiatCurrency": transfer.fiat_currency,
            "fiatAmount": (
                from_minor(transfer.fiat_amount_minor, transfer.fiat_currency)
                if transfer.fiat_amount_minor is not None and transfer.fiat_currency
                else None
            ),
            "budgetId": transfer.budget_id,
            "reason": transfer.reason,
        },
    )


# ------------------------------------------------------------------------------------- reads


async def transfer_of(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    transfer_id: str,
) -> CryptoTransfer:
    """The user's transfer, refreshed from the rail while it is pending (a rail that cannot
    answer leaves it as stored: a read never fails because the rail is down)."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    repository = TransferRepository(session, company_id)
    found = await repository.find(transfer_id)
    if found is None or found.user_id != user_id:
        raise TransferNotFound()
    try:
        await refresh(session, providers, transfer=found)
    except ApiError as exc:
        log.warning("crypto_transfer_refresh_failed", transfer_id=transfer_id, code=exc.code)
        await session.rollback()
    refreshed = await repository.find(transfer_id)
    assert refreshed is not None
    return refreshed


async def refresh(session: AsyncSession, providers: Providers, *, transfer: CryptoTransfer) -> None:
    """Ask the rail about a pending transfer by its key and apply the answer (under the
    transfer's lock, so a callback racing the read settles it once). Raises the rail's
    failure; a rail without a record of the key changes nothing."""
    if transfer.kind == TransferKind.WALLET_WITHDRAWAL.value:
        await withdrawals.refresh(session, providers, transfer=transfer)
        return
    if transfer.status != TransferStatus.PENDING.value or providers.crypto is None:
        return
    if transfer.kind == TransferKind.BANKPROV_TO_CARDPROV.value:
        # Imported here: that flow builds on this module's settlement.
        from finplat.crypto.cardprov import service as cardprov

        await cardprov.refresh(session, providers, transfer=transfer)
        return
    if transfer.kind == TransferKind.CARDPROV_TO_BANKPROV.value:
        from finplat.crypto.cardprov_to_bankprov import service as card_to_bank

        await card_to_bank.advance(session, providers, transfer=transfer)
        return
    rail, key, company_id = providers.crypto, transfer.provider_key, transfer.company_id
    conversion = await commit_then_call(
        session,
        providers.policy,
        provider=rail.name,
        operation="conversion_by_key",
        call=lambda: rail.conversion_by_key(company_id=company_id, idempotency_key=key),
        idempotent=True,
    )
    if conversion is None:
        return
    locked = await TransferRepository(session, company_id).find(transfer.id, lock=True)
    assert locked is not None
    await apply(session, transfer=locked, conversion=conversion)


async def pending_transfers(session: AsyncSession, *, company_id: int) -> list[str]:
    return await TransferRepository(session, company_id).pending_ids()


async def find_transfer(
    session: AsyncSession, *, company_id: int, transfer_id: str
) -> CryptoTransfer | None:
    return await TransferRepository(session, company_id).find(transfer_id)


async def settle_by_key(
    session: AsyncSession, *, company_id: int, provider: str, key: str, conversion: Conversion
) -> None:
    """The rail's `conversion.updated`, applied under the transfer's lock."""
    transfer = await TransferRepository(session, company_id).by_provider_key(
        provider, key, lock=True
    )
    if transfer is None:
        log.warning("crypto_conversion_for_unknown_transfer", conversion=conversion.conversion_id)
        return
    await apply(session, transfer=transfer, conversion=conversion)
