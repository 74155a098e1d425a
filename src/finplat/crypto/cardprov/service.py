"""Fiat to the card provider: `bankprov-to-cardprov` (issue 33, item 4).

Quote: `Amount` of a fiat currency of one of the user's banking budgets buys USDC at the
rail's rate for `QUOTE_LIFETIME`; the platform's fee is 0.5 % of the USDC bought, rounded up
to the coin's cent and kept in USDC; the rest is delivered to the USDC deposit address of the
user's card at the card provider.

Funds decision (`APPROVE` is the same operation as `POST /bankprov-to-cardprov`), in phases,
each a recovery point of the request's Idempotency-Key:
  started  -> decide the quote (OPEN -> APPROVED, one conditional UPDATE: of parallel
              decisions one wins, the others are 409), reserve the fiat (budget -> settlement,
              and the USDC fee settlement -> fee revenue, pending; 409 `INSUFFICIENT_FUNDS`
              rolls it all back), record a `PENDING` transfer carrying the rail's key: one
              commit
  reserved -> the rail buys and delivers with that key (a retry gets its first answer):
              pending -> stays `PENDING` until the rail's `card_transfer.updated`; refused ->
              released, `FAILED`; no answer -> stays `PENDING`, found later by its key (the
              transfer's read and reconciliation ask the rail).
The rail's outcome: `COMPLETED` posts the reservation; `FAILED` releases it. Each is settled
once, under the transfer's lock (`exchange.complete` / `exchange.fail`).
"""

from __future__ import annotations

import secrets
from decimal import ROUND_DOWN, Decimal

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts, budgets
from finplat.cards import lookup
from finplat.cards.funding.deposits import DEPOSIT_PROVIDER, DepositNotSupported
from finplat.cards.programs import provider_card_id
from finplat.crypto.addresses.service import NO_CRYPTO
from finplat.crypto.cardprov.models import (
    CardProviderQuote,
    CardQuoteStatus,
    Direction,
)
from finplat.crypto.cardprov.repository import CardProviderQuoteRepository
from finplat.crypto.edd import service as edd
from finplat.crypto.exchange import service as exchange
from finplat.crypto.transfers.models import CryptoTransfer, TransferKind, TransferStatus
from finplat.crypto.transfers.repository import TransferRepository
from finplat.errors import ApiError, Conflict, NotFound
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money, exponent, from_minor
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.providers.calls import commit_then_call
from finplat.providers.crypto.card_rails import (
    CardProviderRail,
    RailTransfer,
    RailTransferStatus,
)
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.names import ExternalProvider
from finplat.providers.registry import Providers, configured
from finplat.users import service as users

log = structlog.get_logger("finplat.crypto.cardprov")
COIN = "USDC"  # the card provider's deposit addresses take USDC
LEDGER_CODE = "crypto.bankprov_to_cardprov"
RESERVED = "reserved"
REJECTED = "rejected"


class CardQuoteNotFound(NotFound):
    code = "QUOTE_NOT_FOUND"
    message = "No card-provider quote with that QuoteId for this user and flow."


class QuoteDeclined(Conflict):
    code = "QUOTE_DECLINED"
    message = "The quote was declined; ask for a new one."


class RailCannotReachCardProvider(Conflict):
    code = "CARDPROV_TRANSFERS_NOT_SUPPORTED"
    message = "The configured crypto rail does not deliver to the card provider."


class AmountTooSmall(Conflict):
    code = "AMOUNT_TOO_SMALL"
    message = "The amount buys nothing once the fee is taken."


class DeliveryRejected(ApiError):
    """The rail's refusal, replayed when the refused decision is resumed."""


def new_quote_id() -> str:
    return f"cpq_{secrets.token_hex(12)}"


def card_rail(providers: Providers) -> CardProviderRail:
    rail = configured(providers.crypto, NO_CRYPTO)
    if not isinstance(rail, CardProviderRail):
        raise RailCannotReachCardProvider()
    return rail


def coins_for(fiat: Money, rate: Decimal) -> int:
    """What `fiat` buys at `rate` (coin units per fiat unit), rounded down to the coin's
    minor unit (never more than the rail delivers)."""
    coins = (fiat.amount * rate).quantize(Decimal(1).scaleb(-exponent(COIN)), ROUND_DOWN)
    return int(coins.scaleb(exponent(COIN)).to_integral_value())


# ------------------------------------------------------------------------------------ quotes


async def quote(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    fiat: Money,
    budget_id: str,
    card_id: int,
    edd_threshold: Decimal,
) -> CardProviderQuote:
    """Price `fiat` from the budget in USDC delivered to the card (see the module). USDC of
    at least `edd_threshold` needs the user's EDD (409 `EDD_REQUIRED`)."""
    budget = await accounts.user_budget(
        session, company_id=company_id, user_id=user_id, budget_id=budget_id
    )
    await accounts.banking_account(session, company_id=company_id, user_id=user_id)
    await accounts.budget_balance(
        session, company_id=company_id, budget=budget, currency=fiat.currency
    )
    card = await lookup.find_card(session, company_id=company_id, card_id=card_id, user_id=user_id)
    card.refuse_if_cancelled()
    if card.provider != DEPOSIT_PROVIDER:
        raise DepositNotSupported()
    provider_card_id(card)  # the card provider must have issued it: its address is per card
    rail = card_rail(providers)
    priced = await commit_then_call(
        session,
        providers.policy,
        provider=rail.name,
        operation="quote_card_funding",
        call=lambda: rail.quote_card_funding(
            company_id=company_id, fiat_currency=fiat.currency, currency=COIN
        ),
        idempotent=True,  # a read
    )
    gross = coins_for(fiat, priced.rate)
    await edd.require_for(
        session,
        company_id=company_id,
        user_id=user_id,
        amount=from_minor(gross, COIN),
        threshold=edd_threshold,
    )
    fee = exchange.fee_of(Money(gross, COIN))
    if gross - fee <= 0:
        raise AmountTooSmall()
    return await CardProviderQuoteRepository(session, company_id).add(
        CardProviderQuote(
            id=new_quote_id(),
            user_id=user_id,
            direction=Direction.BANKPROV_TO_CARDPROV.value,
            budget_id=budget.id,
            card_id=card.id,
            fiat_currency=fiat.currency,
            fiat_amount_minor=fiat.minor,
            currency=COIN,
            amount_minor=gross,
            fee_minor=fee,
            rate=str(priced.rate),
            expires_at=priced.expires_at,
            status=CardQuoteStatus.OPEN.value,
        )
    )


async def quote_of(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    quote_id: str,
    direction: Direction = Direction.BANKPROV_TO_CARDPROV,
) -> CardProviderQuote:
    """The user's quote of the flow `direction` (404 `USER_NOT_FOUND`, else
    `QUOTE_NOT_FOUND`: a quote of the other direction is not one of this flow's)."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    found = await CardProviderQuoteRepository(session, company_id).find(quote_id)
    if found is None or found.user_id != user_id or found.direction != direction.value:
        raise CardQuoteNotFound()
    return found


# ---------------------------------------------------------------------------- funds decision


async def decline(
    session: AsyncSession, *, company_id: int, quote: CardProviderQuote
) -> CardProviderQuote:
    """Close an open quote without moving anything (409 once decided or expired)."""
    quotes = CardProviderQuoteRepository(session, company_id)
    if not await quotes.decide(
        quote.id, status=CardQuoteStatus.DECLINED, transfer_id=None, now=utcnow()
    ):
        await refuse_decided(quotes, quote.id)
    found = await quotes.find(quote.id)
    assert found is not None
    return found


async def refuse_decided(quotes: CardProviderQuoteRepository, quote_id: str) -> None:
    """Why a quote could not be decided: 409 already approved, declined, or expired."""
    current = await quotes.find(quote_id)
    if current is not None and current.status == CardQuoteStatus.APPROVED.value:
        raise exchange.QuoteAlreadyAccepted()
    if current is not None and current.status == CardQuoteStatus.DECLINED.value:
        raise QuoteDeclined()
    raise exchange.QuoteExpired()


async def approve(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    quote: CardProviderQuote,
) -> CryptoTransfer:
    """Approve the quote once and start its delivery (see the module's phases)."""
    rail = card_rail(providers)
    if claim.recovery_point == idempotency.STARTED:
        reserved = await _reserve(session, claim=claim, company_id=company_id, quote=quote)
        await idempotency.checkpoint(session, claim, RESERVED, transfer_id=reserved.id)
    else:
        # Resuming: commit the key takeover so no lock is held across the rail's call.
        await idempotency.checkpoint(session, claim, claim.recovery_point)
    if claim.recovery_point == REJECTED:
        refusal = claim.state.get("refusal") or {}
        raise DeliveryRejected(
            refusal.get("message"), status=refusal.get("status"), code=refusal.get("code")
        )
    repository = TransferRepository(session, company_id)
    transfer = await repository.find(str(claim.state["transfer_id"]))
    assert transfer is not None
    budget = await accounts.find_budget(session, company_id=company_id, budget_id=quote.budget_id)
    assert budget is not None
    card = await lookup.find_card(session, company_id=company_id, card_id=quote.card_id)
    key, source, card_ref = transfer.provider_key, budget.provider_budget_id, provider_card_id(card)
    delivered = transfer.amount_minor - transfer.fee_minor
    fiat_currency, fiat_amount = quote.fiat_currency, quote.fiat_amount_minor
    try:
        answer = await commit_then_call(
            session,
            providers.policy,
            provider=rail.name,
            operation="fund_card_provider",
            call=lambda: rail.fund_card_provider(
                company_id=company_id,
                idempotency_key=key,
                fiat_currency=fiat_currency,
                fiat_amount_minor=fiat_amount,
                source_budget_id=source,
                currency=COIN,
                amount_minor=delivered,
                card_reference=card_ref,
            ),
            idempotent=True,  # it carries the rail's key
        )
    except ProviderRejected as exc:
        locked = await repository.find(transfer.id, lock=True)
        assert locked is not None
        await exchange.fail(session, transfer=locked, reason=exc.message)
        await idempotency.checkpoint(
            session,
            claim,
            REJECTED,
            refusal={"status": exc.status, "code": exc.code, "message": exc.message},
        )
        raise
    except ProviderUnavailable:
        # Uncertain: the rail may have started it. It stays PENDING; a read finds it by key.
        log.warning("crypto_cardprov_outcome_unknown", transfer_id=transfer.id)
    else:
        locked = await repository.find(transfer.id, lock=True)
        assert locked is not None
        await apply(session, transfer=locked, answer=answer)
    found = await repository.find(transfer.id)
    assert found is not None
    return found


async def _reserve(
    session: AsyncSession, *, claim: Claim, company_id: int, quote: CardProviderQuote
) -> CryptoTransfer:
    transfer_id = exchange.new_transfer_id()
    quotes = CardProviderQuoteRepository(session, company_id)
    if not await quotes.decide(
        quote.id, status=CardQuoteStatus.APPROVED, transfer_id=transfer_id, now=utcnow()
    ):
        await refuse_decided(quotes, quote.id)
    card = await lookup.find_card(session, company_id=company_id, card_id=quote.card_id)
    card.refuse_if_cancelled()  # cancelled since the quote: nothing is reserved
    fiat = quote.fiat_currency
    settlement = ledger.company_key(company_id, CompanyAccount.SETTLEMENT)
    wanted = [(budgets.account_key(quote.budget_id), fiat), (settlement, fiat)]
    if quote.fee_minor:
        revenue = ledger.company_key(company_id, CompanyAccount.FEE_REVENUE)
        wanted += [(settlement, COIN), (revenue, COIN)]
    accounts = await ledger.accounts_in(session, company_id=company_id, wanted=wanted)
    source, fiat_settlement = accounts[:2]
    legs = [
        Leg(source.id, -quote.fiat_amount_minor),
        Leg(fiat_settlement.id, quote.fiat_amount_minor),
    ]
    if quote.fee_minor:
        # The rail buys the whole amount in USDC; the fee part stays with the company.
        coin_settlement, fee_revenue = accounts[2:]
        legs += [Leg(coin_settlement.id, -quote.fee_minor), Leg(fee_revenue.id, quote.fee_minor)]
    pending = await ledger.create_pending(
        session,
        company_id=company_id,
        legs=legs,
        code=LEDGER_CODE,
        expires_at=None,  # until the rail's answer settles it
        reference=transfer_id,
        details={"cardId": quote.card_id},
        accounts=accounts,
    )
    transfer = await TransferRepository(session, company_id).add(
        CryptoTransfer(
            id=transfer_id,
            user_id=quote.user_id,
            kind=TransferKind.BANKPROV_TO_CARDPROV.value,
            status=TransferStatus.PENDING.value,
            provider=ExternalProvider.CRYPTO.value,
            provider_key=claim.derived_key("crypto-cardprov-funding"),
            currency=COIN,
            amount_minor=quote.amount_minor,
            fee_minor=quote.fee_minor,
            rate=quote.rate,
            fiat_currency=fiat,
            fiat_amount_minor=quote.fiat_amount_minor,
            budget_id=quote.budget_id,
            quote_id=quote.id,
            ledger_pending_id=pending.transfer_id,
        )
    )
    await exchange.record_event(session, transfer, "pending")
    return transfer


# -------------------------------------------------------------------------------- settlement


async def apply(session: AsyncSession, *, transfer: CryptoTransfer, answer: RailTransfer) -> None:
    """What the rail says about the delivery; the caller holds the transfer's lock."""
    if transfer.provider_reference is None:
        transfer.provider_reference = answer.reference
    if answer.status is RailTransferStatus.COMPLETED:
        await exchange.complete(session, transfer=transfer)
    elif answer.status is RailTransferStatus.FAILED:
        await exchange.fail(session, transfer=transfer, reason=answer.reason or "The rail failed.")
    await session.flush()


async def refresh(session: AsyncSession, providers: Providers, *, transfer: CryptoTransfer) -> None:
    """Ask the rail about a pending delivery by its key and apply the answer (under the
    transfer's lock). Raises the rail's failure; a rail without a record changes nothing."""
    if transfer.status != TransferStatus.PENDING.value or providers.crypto is None:
        return
    rail, key, company_id = card_rail(providers), transfer.provider_key, transfer.company_id
    answer = await commit_then_call(
        session,
        providers.policy,
        provider=rail.name,
        operation="card_transfer_by_key",
        call=lambda: rail.card_transfer_by_key(company_id=company_id, idempotency_key=key),
        idempotent=True,
    )
    if answer is None:
        return
    locked = await TransferRepository(session, company_id).find(transfer.id, lock=True)
    assert locked is not None
    await apply(session, transfer=locked, answer=answer)


async def settle_by_key(
    session: AsyncSession, *, company_id: int, key: str, answer: RailTransfer
) -> bool:
    """The rail's `card_transfer.updated` for a delivery, applied under the transfer's lock;
    False when no transfer has that key."""
    transfer = await TransferRepository(session, company_id).by_provider_key(
        ExternalProvider.CRYPTO.value, key, lock=True
    )
    if transfer is None:
        return False
    await apply(session, transfer=transfer, answer=answer)
    return True
