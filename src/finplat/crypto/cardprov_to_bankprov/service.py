"""Card provider to banking provider: `cardprov-to-bankprov` (issue 33, item 4).

The user's money at the card provider is the card's USD balance (the card provider settles the
stablecoins it receives into USD). The flow takes `Amount` USD off the card with the ordinary
card unload (its fee from the tier's schedule), has the card provider pay the net out in USDC
1:1 to the rail, and the rail sells it into a banking-provider budget at its rate, as the
crypto-to-fiat conversion of `bankprov-deposits` (its 0.5 % fee, kept by the company).

Quote: the unload's fee and the conversion priced for `QUOTE_LIFETIME` (the card-provider
quote, `Direction: CARDPROV_TO_BANKPROV`).

Funds decision (`APPROVE` is the same operation as `POST /cardprov-to-bankprov`), in phases;
the request's Idempotency-Key records the transfer, each provider step has a key of its own
derived from the transfer, so every step is resumed, never repeated:
  started   -> decide the quote (OPEN -> APPROVED, one conditional UPDATE), record a `PENDING`
               transfer and the card unload's reservation (409 `INSUFFICIENT_CARD_BALANCE`
               rolls it all back, the quote stays open): one commit
  unloading -> the card provider unloads the card under the key `cardprov-to-bankprov:{id}`
               (the ordinary unload: card -> master, fee revenue); refused -> `FAILED`, nothing
               else moved; no answer -> stays `PENDING`, resumed by key
  unloaded  -> the net is reserved toward the budget (master -> USD settlement and fee revenue,
               pending), then the rail converts it under the transfer's key
The rail's outcome: `COMPLETED` posts the reservation (the fiat reaches the budget through
the banking provider's own incoming payment); `FAILED` voids it, gives the unload fee back
from fee revenue to the master account and puts the whole `Amount` back on the card with a
fee-free top-up keyed by the transfer (`cardprov-to-bankprov-refund:{id}`); only then is the
transfer `FAILED`. A failed conversion costs the user nothing.

Between the conversion's failure and the top-up the transfer stays `PENDING` with its
`reason` set (the marker of a refund due): the rail's callback cannot call the card provider,
so the refund is made by the next step that can (the sandbox's move at once, a read of the
transfer, reconciliation).
"""

from __future__ import annotations

from decimal import Decimal

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts
from finplat.cards import lookup
from finplat.cards.funding import service as funding
from finplat.cards.funding.deposits import DEPOSIT_PROVIDER, DepositNotSupported
from finplat.cards.funding.fees import schedule_for
from finplat.cards.funding.models import CardFunding
from finplat.cards.funding.service import FundingKind, FundingStatus
from finplat.cards.programs import provider_card_id
from finplat.crypto.addresses.service import NO_CRYPTO
from finplat.crypto.cardprov import service as cardprov
from finplat.crypto.cardprov.models import CardProviderQuote, CardQuoteStatus, Direction
from finplat.crypto.cardprov.repository import CardProviderQuoteRepository
from finplat.crypto.edd import service as edd
from finplat.crypto.exchange import service as exchange
from finplat.crypto.transfers.models import CryptoTransfer, TransferKind, TransferStatus
from finplat.crypto.transfers.repository import TransferRepository
from finplat.errors import ApiError
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money, exponent, from_minor
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount, TransferAlreadyResolved
from finplat.providers.calls import commit_then_call
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.names import ExternalProvider
from finplat.providers.registry import Providers, configured

log = structlog.get_logger("finplat.crypto.cardprov_to_bankprov")
COIN = "USDC"  # what the card provider pays out to the rail, 1:1 with its USD
CARD_CURRENCY = "USD"
COIN_UNITS_PER_CENT = 10 ** (exponent(COIN) - exponent(CARD_CURRENCY))
LEDGER_CODE = "crypto.cardprov_to_bankprov"
FEE_REFUND_CODE = "crypto.cardprov_to_bankprov.unload_fee_refund"
TRIGGER = "CRYPTO_TRANSFER"  # the unload's and the refund's `trigger` (16 characters at most)
UNLOADING = "unloading"
REJECTED = "rejected"
UNLOAD_STEP = "card-unload"  # the step `funding.unload` derives its provider key from


def unload_claim(transfer: CryptoTransfer) -> Claim:
    """The card unload's operation, fixed by the transfer (its provider key derives from it)."""
    return Claim(
        company_id=transfer.company_id, key=f"cardprov-to-bankprov:{transfer.id}", token=""
    )


def refund_claim(transfer: CryptoTransfer) -> Claim:
    """The top-up that puts a failed conversion's money back on the card, fixed likewise."""
    return Claim(
        company_id=transfer.company_id, key=f"cardprov-to-bankprov-refund:{transfer.id}", token=""
    )


# ------------------------------------------------------------------------------------ quotes


async def quote(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    card_money: Money,
    card_id: int,
    budget_id: str,
    fiat_currency: str,
    edd_threshold: Decimal,
) -> CardProviderQuote:
    """Price `card_money` (USD off the card) in `fiat_currency` paid into the budget: the
    unload fee of the card's tier, the rest 1:1 in USDC, its 0.5 % fee, the rest sold at the
    rail's rate rounded down to the fiat cent. USDC of at least `edd_threshold` needs the
    user's EDD (409 `EDD_REQUIRED`); nothing left to pay is 409 `AMOUNT_TOO_SMALL`."""
    budget = await accounts.user_budget(
        session, company_id=company_id, user_id=user_id, budget_id=budget_id
    )
    await accounts.banking_account(session, company_id=company_id, user_id=user_id)
    await accounts.budget_balance(
        session, company_id=company_id, budget=budget, currency=fiat_currency
    )
    card = await lookup.find_card(session, company_id=company_id, card_id=card_id, user_id=user_id)
    card.refuse_if_cancelled()
    if card.provider != DEPOSIT_PROVIDER:
        raise DepositNotSupported("Only card-provider cards settle with the crypto rail.")
    if card.currency != CARD_CURRENCY:
        raise funding.CardCurrencyMismatch(f"The card holds {card.currency}, not USD.")
    provider_card_id(card)
    schedule = await schedule_for(session, company_id=company_id, tier_id=card.tier_id)
    unload_fee = schedule.unload_fee(card_money.minor)
    gross = (card_money.minor - unload_fee) * COIN_UNITS_PER_CENT
    rail = configured(providers.crypto, NO_CRYPTO)
    priced = await commit_then_call(
        session,
        providers.policy,
        provider=rail.name,
        operation="quote_conversion",
        call=lambda: rail.quote_conversion(
            company_id=company_id, currency=COIN, fiat_currency=fiat_currency
        ),
        idempotent=True,  # a read
    )
    await edd.require_for(
        session,
        company_id=company_id,
        user_id=user_id,
        amount=from_minor(max(gross, 0), COIN),
        threshold=edd_threshold,
    )
    if gross <= 0:
        raise cardprov.AmountTooSmall()
    fee = exchange.fee_of(Money(gross, COIN))
    fiat = exchange.fiat_for(gross - fee, COIN, fiat_currency, priced.rate)
    if fiat <= 0:
        raise cardprov.AmountTooSmall()
    return await CardProviderQuoteRepository(session, company_id).add(
        CardProviderQuote(
            id=cardprov.new_quote_id(),
            user_id=user_id,
            direction=Direction.CARDPROV_TO_BANKPROV.value,
            budget_id=budget.id,
            card_id=card.id,
            fiat_currency=fiat_currency,
            fiat_amount_minor=fiat,
            currency=COIN,
            amount_minor=gross,
            fee_minor=fee,
            rate=str(priced.rate),
            expires_at=priced.expires_at,
            status=CardQuoteStatus.OPEN.value,
            card_amount_minor=card_money.minor,
            card_fee_minor=unload_fee,
        )
    )


async def quote_of(
    session: AsyncSession, *, company_id: int, user_id: int, quote_id: str
) -> CardProviderQuote:
    """The user's quote of this flow (404 `USER_NOT_FOUND`, else `QUOTE_NOT_FOUND`)."""
    return await cardprov.quote_of(
        session,
        company_id=company_id,
        user_id=user_id,
        quote_id=quote_id,
        direction=Direction.CARDPROV_TO_BANKPROV,
    )


# ---------------------------------------------------------------------------- funds decision


async def approve(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    quote: CardProviderQuote,
) -> CryptoTransfer:
    """Approve the quote once and run its transfer as far as the providers let it (see the
    module's phases)."""
    configured(providers.crypto, NO_CRYPTO)
    repository = TransferRepository(session, company_id)
    if claim.recovery_point == idempotency.STARTED:
        transfer = await _open(session, claim=claim, company_id=company_id, quote=quote)
        # Written with the unload's reservation, in the commit the unload makes.
        await idempotency.note(session, claim, UNLOADING, transfer_id=transfer.id)
        try:
            await _unload(session, providers, transfer=transfer, quote=quote)
        except ProviderRejected as exc:
            await idempotency.checkpoint(
                session,
                claim,
                REJECTED,
                refusal={"status": exc.status, "code": exc.code, "message": exc.message},
            )
            raise
        except ProviderUnavailable:
            # The unload's outcome is unknown: the transfer stays PENDING (committed with the
            # reservation); its read and reconciliation resume the unload by its key.
            # The id is read before the rollback, which expires the transfer: an async session
            # cannot load an expired attribute.
            transfer_id = transfer.id
            log.warning("crypto_card_to_bank_unload_unknown", transfer_id=transfer_id)
            await session.rollback()
            pending = await repository.find(transfer_id)
            assert pending is not None
            return pending
    else:
        # Resuming: commit the key takeover so no lock is held across a provider's call.
        await idempotency.checkpoint(session, claim, claim.recovery_point)
        if claim.recovery_point == REJECTED:
            refusal = claim.state.get("refusal") or {}
            raise exchange.ConversionRejected(
                refusal.get("message"), status=refusal.get("status"), code=refusal.get("code")
            )
    transfer_id = str(claim.state["transfer_id"])
    found = await repository.find(transfer_id)
    assert found is not None
    try:
        await advance(session, providers, transfer=found)
    except ProviderUnavailable:
        # Uncertain: a provider may have made it. The transfer stays PENDING; its read and
        # reconciliation resume it by key.
        log.warning("crypto_card_to_bank_outcome_unknown", transfer_id=transfer_id)
        await session.rollback()
    except ProviderRejected as exc:
        await idempotency.checkpoint(
            session,
            claim,
            REJECTED,
            refusal={"status": exc.status, "code": exc.code, "message": exc.message},
        )
        raise
    done = await repository.find(transfer_id)
    assert done is not None
    return done


async def _open(
    session: AsyncSession, *, claim: Claim, company_id: int, quote: CardProviderQuote
) -> CryptoTransfer:
    transfer_id = exchange.new_transfer_id()
    quotes = CardProviderQuoteRepository(session, company_id)
    if not await quotes.decide(
        quote.id, status=CardQuoteStatus.APPROVED, transfer_id=transfer_id, now=utcnow()
    ):
        await cardprov.refuse_decided(quotes, quote.id)
    transfer = await TransferRepository(session, company_id).add(
        CryptoTransfer(
            id=transfer_id,
            user_id=quote.user_id,
            kind=TransferKind.CARDPROV_TO_BANKPROV.value,
            status=TransferStatus.PENDING.value,
            provider=ExternalProvider.CRYPTO.value,
            provider_key=claim.derived_key("crypto-card-to-bank-conversion"),
            currency=COIN,
            amount_minor=quote.amount_minor,
            fee_minor=quote.fee_minor,
            rate=quote.rate,
            fiat_currency=quote.fiat_currency,
            fiat_amount_minor=quote.fiat_amount_minor,
            budget_id=quote.budget_id,
            quote_id=quote.id,
        )
    )
    await exchange.record_event(session, transfer, "pending")
    return transfer


async def _unload(
    session: AsyncSession,
    providers: Providers,
    *,
    transfer: CryptoTransfer,
    quote: CardProviderQuote,
) -> None:
    """The card's unload under the transfer's key, started or resumed. A refusal by the card
    provider after the reservation fails the transfer (nothing else has moved) and is raised;
    a card holding too little before anything is written is raised as it is (the caller's
    transaction, the approval included, rolls back)."""
    assert quote.card_amount_minor is not None
    claim = unload_claim(transfer)
    earlier = await _funding(session, claim, UNLOAD_STEP)
    if earlier is not None:
        if earlier.status == FundingStatus.FAILED.value:
            await _fail_before_conversion(
                session, transfer, "The card provider refused the unload."
            )
            return
        if earlier.status == FundingStatus.COMPLETED.value:
            return
        claim.recovery_point, claim.state = funding.RESERVED, {"funding_id": earlier.id}
    try:
        await funding.unload(
            session,
            providers,
            claim=claim,
            company_id=transfer.company_id,
            card_id=quote.card_id,
            money=Money(quote.card_amount_minor, CARD_CURRENCY),
            trigger=TRIGGER,
        )
    except ApiError as exc:
        if claim.recovery_point == idempotency.STARTED or exc.status >= 500:
            raise  # nothing written yet (rolls back), or the outcome is unknown
        await _fail_before_conversion(session, transfer, exc.message or exc.code)
        raise ProviderRejected(exc.message, status=exc.status, code=exc.code) from exc


async def _funding(session: AsyncSession, claim: Claim, step: str) -> CardFunding | None:
    return await funding.funding_by_key(session, claim.company_id, claim.derived_key(step))


async def _fail_before_conversion(
    session: AsyncSession, transfer: CryptoTransfer, reason: str
) -> None:
    """The unload was refused: its reservation is already void, nothing else moved."""
    locked = await TransferRepository(session, transfer.company_id).find(transfer.id, lock=True)
    assert locked is not None
    if locked.status != TransferStatus.PENDING.value or locked.ledger_pending_id is not None:
        return
    _close(locked, TransferStatus.FAILED, reason)
    await session.flush()
    await exchange.record_event(session, locked, "failed")
    await session.commit()


def _close(transfer: CryptoTransfer, status: TransferStatus, reason: str | None) -> None:
    transfer.status = status.value
    transfer.reason = reason[:200] if reason else None
    transfer.completed_at = utcnow()


# ----------------------------------------------------------------------------------- advance


async def advance(session: AsyncSession, providers: Providers, *, transfer: CryptoTransfer) -> None:
    """Take a pending transfer as far as the providers let it, each step under its key: the
    unload, the conversion's reservation, the conversion (started, or asked by key), and a
    failed conversion's refund onto the card. Raises a provider's unavailability (the
    transfer stays `PENDING`) or the refusal of the conversion or the unload."""
    company_id = transfer.company_id
    repository = TransferRepository(session, company_id)
    if transfer.status != TransferStatus.PENDING.value:
        return
    quote = await CardProviderQuoteRepository(session, company_id).find(str(transfer.quote_id))
    assert quote is not None
    if transfer.ledger_pending_id is None:
        await _unload(session, providers, transfer=transfer, quote=quote)
        unloaded = await _funding(session, unload_claim(transfer), UNLOAD_STEP)
        if unloaded is None or unloaded.status != FundingStatus.COMPLETED.value:
            return
        await _reserve(session, transfer_id=transfer.id, company_id=company_id)
    current = await repository.find(transfer.id)
    assert current is not None
    if current.status == TransferStatus.PENDING.value and current.reason is None:
        await _convert(session, providers, transfer=current)
    current = await repository.find(transfer.id)
    assert current is not None
    if current.status == TransferStatus.PENDING.value and current.reason is not None:
        await _refund(session, providers, transfer=current, quote=quote)


async def _reserve(session: AsyncSession, *, transfer_id: str, company_id: int) -> None:
    """The unloaded net, held toward the budget: master -> USD settlement (and the 0.5 % fee,
    in USD cents, to fee revenue), pending until the rail decides."""
    locked = await TransferRepository(session, company_id).find(transfer_id, lock=True)
    assert locked is not None
    if locked.status != TransferStatus.PENDING.value or locked.ledger_pending_id is not None:
        return
    net, fee = locked.amount_minor // COIN_UNITS_PER_CENT, locked.fee_minor // COIN_UNITS_PER_CENT
    kinds = [CompanyAccount.MASTER, CompanyAccount.SETTLEMENT]
    if fee:
        kinds.append(CompanyAccount.FEE_REVENUE)
    found = await ledger.company_accounts_in(
        session, company_id=company_id, kinds=kinds, currency=CARD_CURRENCY
    )
    master, settlement = found[CompanyAccount.MASTER], found[CompanyAccount.SETTLEMENT]
    legs = [Leg(master.id, -net), Leg(settlement.id, net - fee)]
    if fee:
        legs.append(Leg(found[CompanyAccount.FEE_REVENUE].id, fee))
    pending = await ledger.create_pending(
        session,
        company_id=company_id,
        legs=legs,
        code=LEDGER_CODE,
        expires_at=None,  # until the rail's answer settles it
        reference=locked.id,
        accounts=list(found.values()),
    )
    locked.ledger_pending_id = pending.transfer_id
    await session.flush()
    await session.commit()


async def _convert(
    session: AsyncSession, providers: Providers, *, transfer: CryptoTransfer
) -> None:
    """Start the conversion (or ask the rail for it by key once started) and apply the
    answer under the transfer's lock; a refusal fails the conversion (the refund follows)."""
    rail = configured(providers.crypto, NO_CRYPTO)
    repository = TransferRepository(session, transfer.company_id)
    if transfer.provider_reference is None:
        try:
            conversion = await exchange.convert(session, providers, transfer=transfer)
        except ProviderRejected as exc:
            locked = await repository.find(transfer.id, lock=True)
            assert locked is not None
            await conversion_failed(session, transfer=locked, reason=exc.message or exc.code)
            await session.commit()
            return
    else:
        company_id, key = transfer.company_id, transfer.provider_key
        found = await commit_then_call(
            session,
            providers.policy,
            provider=rail.name,
            operation="conversion_by_key",
            call=lambda: rail.conversion_by_key(company_id=company_id, idempotency_key=key),
            idempotent=True,
        )
        if found is None:
            return
        conversion = found
    locked = await repository.find(transfer.id, lock=True)
    assert locked is not None
    await exchange.apply(session, transfer=locked, conversion=conversion)
    await session.commit()


async def conversion_failed(
    session: AsyncSession, *, transfer: CryptoTransfer, reason: str
) -> bool:
    """The rail failed the conversion (the caller holds the transfer's lock): the reservation
    is voided and the unload's fee goes back from fee revenue to the master account, once;
    the transfer stays `PENDING` with `reason` until its money is back on the card."""
    if (
        transfer.status != TransferStatus.PENDING.value
        or transfer.reason is not None
        or transfer.ledger_pending_id is None
    ):
        return False
    try:
        await ledger.void_pending(
            session,
            company_id=transfer.company_id,
            pending_id=transfer.ledger_pending_id,
            details={"reason": reason[:200]},
        )
    except TransferAlreadyResolved:
        return False
    unloaded = await _funding(session, unload_claim(transfer), UNLOAD_STEP)
    if unloaded is not None and unloaded.fee_minor:
        accounts_ = await ledger.company_accounts_in(
            session,
            company_id=transfer.company_id,
            kinds=(CompanyAccount.FEE_REVENUE, CompanyAccount.MASTER),
            currency=CARD_CURRENCY,
        )
        await ledger.post_transfer(
            session,
            company_id=transfer.company_id,
            legs=[
                Leg(accounts_[CompanyAccount.FEE_REVENUE].id, -unloaded.fee_minor),
                Leg(accounts_[CompanyAccount.MASTER].id, unloaded.fee_minor),
            ],
            code=FEE_REFUND_CODE,
            reference=transfer.id,
        )
    transfer.reason = reason[:200]
    await session.flush()
    return True


async def _refund(
    session: AsyncSession,
    providers: Providers,
    *,
    transfer: CryptoTransfer,
    quote: CardProviderQuote,
) -> None:
    """Put the whole unloaded `Amount` back on the card, fee-free, once (the top-up keyed by
    the transfer: run again it resumes or answers the first). A card that refuses it (since
    cancelled) leaves the money in the master account, as the card's cancellation would,
    and says so; an unknown outcome stays `PENDING` for the next round."""
    assert quote.card_amount_minor is not None
    claim = refund_claim(transfer)
    earlier = await _funding(session, claim, funding.LOAD_STEP)
    note: str | None = None
    if earlier is not None and earlier.status == FundingStatus.FAILED.value:
        note = "the card refused the refund; the amount stays with the company"
    elif earlier is None or earlier.status == FundingStatus.PENDING.value:
        if earlier is not None:
            claim.recovery_point, claim.state = funding.RESERVED, {"funding_id": earlier.id}
        try:
            await funding.topup(
                session,
                providers,
                claim=claim,
                company_id=transfer.company_id,
                card_id=quote.card_id,
                money=Money(quote.card_amount_minor, CARD_CURRENCY),
                kind=FundingKind.CRYPTO_REFUND,
                trigger=TRIGGER,
            )
        except ApiError as exc:
            if exc.status >= 500:
                raise
            note = "the card refused the refund; the amount stays with the company"
            log.warning("crypto_card_to_bank_refund_refused", transfer_id=transfer.id)
    locked = await TransferRepository(session, transfer.company_id).find(transfer.id, lock=True)
    assert locked is not None
    if locked.status != TransferStatus.PENDING.value:
        return
    reason = locked.reason or "The rail failed."
    _close(locked, TransferStatus.FAILED, f"{reason} ({note})" if note else reason)
    await session.flush()
    await exchange.record_event(session, locked, "failed")
    await session.commit()
