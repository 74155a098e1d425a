"""Crypto card loads (issue 33, item 7): `Amount` USD loaded onto a card, paid 1:1 in USDC or
USDT from the user's crypto balance and sent on `chain_id` to the card provider.

Create, in phases, each a recovery point of the request's (required) Idempotency-Key:
  started   -> reserve the coins (crypto balance -> settlement, pending; 409
               `INSUFFICIENT_FUNDS` rolls it all back) and record a `PENDING` load carrying the
               rail's key: one commit
  reserved  -> the rail sends it on chain with that key (a retry gets its first answer):
               pending -> stays `PENDING`; refused -> released, `FAILED`; no answer -> stays
               `PENDING`, found later by its key (the load's read asks the rail).
The rail's outcome (`card_transfer.updated`, under the load's lock, once): final on chain ->
the reservation is posted and the coins are settled into the company's USD master account
1:1 (`CONFIRMED`, the card's credit due); failed -> released (`FAILED`).
The credit (the background job, and the sandbox at once after its move): the ordinary card
top-up (same fee schedule and ledger path) under a key fixed by the load, so running it again
resumes or answers that top-up and never credits twice -> `COMPLETED`. A top-up the card
refuses undoes the settlement (the coins back in the crypto balance) -> `FAILED`; an unknown
provider outcome stays `CONFIRMED` and the next round resumes the same top-up.
"""

from __future__ import annotations

import secrets

import structlog
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.cards import lookup
from finplat.cards.funding import service as funding
from finplat.cards.funding.models import CardFunding
from finplat.cards.funding.service import FundingKind, FundingStatus
from finplat.cards.programs import provider_card_id
from finplat.crypto import balances
from finplat.crypto.cardloads.models import CardLoadStatus, CryptoCardLoad
from finplat.crypto.cardloads.repository import CardLoadRepository, confirmed_loads
from finplat.crypto.cardprov.service import card_rail
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError, NotFound
from finplat.events import service as events
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money, exponent, from_minor
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount, TransferAlreadyResolved
from finplat.providers.calls import commit_then_call
from finplat.providers.crypto.card_rails import RailTransfer, RailTransferStatus
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.registry import Providers
from finplat.users import service as users

log = structlog.get_logger("finplat.crypto.cardloads")
CARD_CURRENCY = "USD"
LEDGER_CODE = "crypto.card_load"
SETTLE_CODE = "crypto.card_load.settle"
TRIGGER = "CRYPTO_LOAD"
RESERVED = "reserved"
REJECTED = "rejected"
DOMAIN = "crypto"
BATCH = 20


class CardLoadNotFound(NotFound):
    code = "CARD_LOAD_NOT_FOUND"
    message = "No crypto card load with that LoadId for this user."


class CardLoadRejected(ApiError):
    """The rail's refusal, replayed when the refused load is resumed."""


def new_load_id() -> str:
    return f"ccl_{secrets.token_hex(12)}"


def coins_of(usd_minor: int, currency: str) -> int:
    """The stablecoin amount that pays `usd_minor` 1:1."""
    return usd_minor * int(10 ** (exponent(currency) - exponent(CARD_CURRENCY)))


# ------------------------------------------------------------------------------------ create


async def create(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    user_id: int,
    card_id: int,
    load: Money,
    currency: str,
    chain_id: int,
) -> CryptoCardLoad:
    """Reserve and send the load once (see the module's phases)."""
    rail = card_rail(providers)
    if claim.recovery_point == idempotency.STARTED:
        created = await _reserve(
            session,
            claim=claim,
            company_id=company_id,
            user_id=user_id,
            card_id=card_id,
            load=load,
            currency=currency,
            chain_id=chain_id,
        )
        await idempotency.checkpoint(session, claim, RESERVED, load_id=created.id)
    else:
        await idempotency.checkpoint(session, claim, claim.recovery_point)
    if claim.recovery_point == REJECTED:
        refusal = claim.state.get("refusal") or {}
        raise CardLoadRejected(
            refusal.get("message"), status=refusal.get("status"), code=refusal.get("code")
        )
    repository = CardLoadRepository(session, company_id)
    row = await repository.find(str(claim.state["load_id"]))
    assert row is not None
    card = await lookup.find_card(session, company_id=company_id, card_id=row.card_id)
    key, coin, chain, amount = row.provider_key, row.currency, row.chain_id, row.amount_minor
    card_ref = provider_card_id(card)
    try:
        answer = await commit_then_call(
            session,
            providers.policy,
            provider=rail.name,
            operation="send_card_load",
            call=lambda: rail.send_card_load(
                company_id=company_id,
                idempotency_key=key,
                currency=coin,
                chain_id=chain,
                amount_minor=amount,
                card_reference=card_ref,
            ),
            idempotent=True,  # it carries the rail's key
        )
    except ProviderRejected as exc:
        locked = await repository.find(row.id, lock=True)
        assert locked is not None
        await fail(session, load=locked, reason=exc.message)
        await idempotency.checkpoint(
            session,
            claim,
            REJECTED,
            refusal={"status": exc.status, "code": exc.code, "message": exc.message},
        )
        raise
    except ProviderUnavailable:
        log.warning("crypto_card_load_outcome_unknown", load_id=row.id)
    else:
        locked = await repository.find(row.id, lock=True)
        assert locked is not None
        await apply(session, load=locked, answer=answer)
    found = await repository.find(row.id)
    assert found is not None
    return found


async def _reserve(
    session: AsyncSession,
    *,
    claim: Claim,
    company_id: int,
    user_id: int,
    card_id: int,
    load: Money,
    currency: str,
    chain_id: int,
) -> CryptoCardLoad:
    card = await lookup.find_card(session, company_id=company_id, card_id=card_id, user_id=user_id)
    card.refuse_if_cancelled()
    if card.currency != load.currency:
        raise funding.CardCurrencyMismatch()
    provider_card_id(card)  # a card the provider has not issued cannot be loaded
    load_id = new_load_id()
    coins = coins_of(load.minor, currency)
    accounts = await balances.with_settlement(
        session, company_id=company_id, user_id=user_id, currency=currency
    )
    wallet, settlement = accounts
    pending = await ledger.create_pending(
        session,
        company_id=company_id,
        legs=[Leg(wallet.id, -coins), Leg(settlement.id, coins)],
        code=LEDGER_CODE,
        expires_at=None,  # until the chain's outcome settles it
        reference=load_id,
        details={"cardId": card.id, "chainId": chain_id},
        accounts=accounts,
    )
    row = await CardLoadRepository(session, company_id).add(
        CryptoCardLoad(
            id=load_id,
            user_id=user_id,
            card_id=card.id,
            currency=currency,
            chain_id=chain_id,
            amount_minor=coins,
            load_minor=load.minor,
            status=CardLoadStatus.PENDING.value,
            provider_key=claim.derived_key("crypto-card-load"),
            ledger_pending_id=pending.transfer_id,
        )
    )
    await _event(session, row)
    return row


# -------------------------------------------------------------------------------- settlement


async def apply(session: AsyncSession, *, load: CryptoCardLoad, answer: RailTransfer) -> None:
    """What the rail says about the load; the caller holds the load's lock."""
    if load.provider_reference is None:
        load.provider_reference = answer.reference
    if answer.status is RailTransferStatus.COMPLETED:
        await confirm(session, load=load)
    elif answer.status is RailTransferStatus.FAILED:
        await fail(session, load=load, reason=answer.reason or "The chain transfer failed.")
    await session.flush()


async def confirm(session: AsyncSession, *, load: CryptoCardLoad) -> bool:
    """Final on chain: post the reservation and settle the coins into the company's USD
    master account, which the card's top-up then pays from."""
    if load.status != CardLoadStatus.PENDING.value:
        return False
    assert load.ledger_pending_id is not None
    try:
        await ledger.post_pending(
            session, company_id=load.company_id, pending_id=load.ledger_pending_id
        )
    except TransferAlreadyResolved:
        return False
    await _settle(session, load, back=False)
    load.status = CardLoadStatus.CONFIRMED.value
    load.confirmed_at = utcnow()
    await session.flush()
    await _event(session, load)
    return True


async def fail(session: AsyncSession, *, load: CryptoCardLoad, reason: str) -> bool:
    if load.status != CardLoadStatus.PENDING.value:
        return False
    assert load.ledger_pending_id is not None
    try:
        await ledger.void_pending(
            session,
            company_id=load.company_id,
            pending_id=load.ledger_pending_id,
            details={"reason": reason[:200]},
        )
    except TransferAlreadyResolved:
        return False
    _close(load, CardLoadStatus.FAILED, reason)
    await session.flush()
    await _event(session, load)
    return True


async def _settle(session: AsyncSession, load: CryptoCardLoad, *, back: bool) -> None:
    """Coin settlement -> USD settlement -> master (1:1), or, undoing it, back to the
    user's crypto balance."""
    company_id = load.company_id
    settlement = ledger.company_key(company_id, CompanyAccount.SETTLEMENT)
    wanted = [
        (settlement, CARD_CURRENCY),
        (ledger.company_key(company_id, CompanyAccount.MASTER), CARD_CURRENCY),
    ]
    if back:
        wanted += [(settlement, load.currency), (balances.wallet_key(load.user_id), load.currency)]
    accounts = await ledger.accounts_in(session, company_id=company_id, wanted=wanted)
    usd_settlement, master = accounts[:2]
    coins, usd = load.amount_minor, load.load_minor
    if back:
        coin_settlement, wallet = accounts[2:]
        legs = [
            Leg(master.id, -usd),
            Leg(usd_settlement.id, usd),
            Leg(wallet.id, coins),
            Leg(coin_settlement.id, -coins),
        ]
    else:
        legs = [Leg(usd_settlement.id, -usd), Leg(master.id, usd)]
    await ledger.post_transfer(
        session,
        company_id=company_id,
        legs=legs,
        code=SETTLE_CODE,
        reference=load.id,
        details={"direction": "back" if back else "out"},
        accounts=accounts,
    )


def _close(load: CryptoCardLoad, status: CardLoadStatus, reason: str | None = None) -> None:
    load.status = status.value
    load.reason = reason[:200] if reason else None
    load.completed_at = utcnow()


async def _event(session: AsyncSession, load: CryptoCardLoad) -> None:
    await events.record(
        session,
        company_id=load.company_id,
        type_=f"crypto.card_load.{load.status.lower()}",
        domain=DOMAIN,
        data={
            "loadId": load.id,
            "userId": load.user_id,
            "cardId": load.card_id,
            "status": load.status,
            "currency": load.currency,
            "amount": from_minor(load.amount_minor, load.currency),
            "chainId": load.chain_id,
            "loadAmount": from_minor(load.load_minor, CARD_CURRENCY),
            "orderId": load.funding_id,
            "reason": load.reason,
        },
    )


async def settle_by_key(
    session: AsyncSession, *, company_id: int, key: str, answer: RailTransfer
) -> bool:
    """The rail's `card_transfer.updated` for a load; False when no load has that key."""
    load = await CardLoadRepository(session, company_id).by_provider_key(key, lock=True)
    if load is None:
        return False
    await apply(session, load=load, answer=answer)
    return True


# ------------------------------------------------------------------------------- card credit


async def credit_due(
    factory: async_sessionmaker[AsyncSession], providers: Providers, *, company_id: int | None
) -> int:
    """One round over the confirmed loads: credit each card once; how many were settled."""
    async with unit_of_work(factory) as session:
        due = await confirmed_loads(session, company_id=company_id, limit=BATCH)
    settled = 0
    for owner, load_id in due:
        try:
            settled += await _credit_one(factory, providers, owner, load_id)
        except ApiError as exc:
            log.warning("crypto_card_load_credit_deferred", load_id=load_id, code=exc.code)
    return settled


async def credit_load(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    *,
    company_id: int,
    load_id: str,
) -> bool:
    """Credit the card of one confirmed load, once (as `credit_due` does for each); False
    when it was not confirmed, or another round credits it."""
    try:
        return await _credit_one(factory, providers, company_id, load_id)
    except ApiError as exc:
        log.warning("crypto_card_load_credit_deferred", load_id=load_id, code=exc.code)
        return False


async def _credit_one(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    company_id: int,
    load_id: str,
) -> bool:
    async with unit_of_work(factory) as session:
        bind_company(session, company_id)
        load = await CardLoadRepository(session, company_id).find(load_id)
        if load is None or load.status != CardLoadStatus.CONFIRMED.value:
            return False
        card_id, usd = load.card_id, load.load_minor
    reason: str | None = None
    try:
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            funding_id = await _topup(session, providers, company_id, load_id, card_id, usd)
    except IntegrityError:
        # A parallel round (the maintenance job, a confirmation) reserved this load's top-up
        # first: its key is unique, so nothing moved twice; that round settles the load.
        if not await _topup_reserved(factory, company_id, load_id):
            raise
        log.info("crypto_card_load_credited_elsewhere", load_id=load_id)
        return False
    except ApiError as exc:
        if exc.status >= 500:
            raise  # the top-up's outcome is unknown: resumed by the next round
        funding_id, reason = None, exc.message or exc.code
        log.warning("crypto_card_load_credit_refused", load_id=load_id, code=exc.code)
    async with unit_of_work(factory) as session:
        bind_company(session, company_id)
        load = await CardLoadRepository(session, company_id).find(load_id, lock=True)
        assert load is not None
        if load.status != CardLoadStatus.CONFIRMED.value:
            return False
        if funding_id is None:
            await _settle(session, load, back=True)
            _close(load, CardLoadStatus.FAILED, reason or "The card refused the credit.")
        else:
            load.funding_id = funding_id
            _close(load, CardLoadStatus.COMPLETED)
        await session.flush()
        await _event(session, load)
    return True


async def _topup_reserved(
    factory: async_sessionmaker[AsyncSession], company_id: int, load_id: str
) -> bool:
    """Whether the load's card top-up exists (reserved by whichever round came first)."""
    async with unit_of_work(factory) as session:
        bind_company(session, company_id)
        key = _topup_claim(company_id, load_id).derived_key(funding.LOAD_STEP)
        return await funding.funding_by_key(session, company_id, key) is not None


def _topup_claim(company_id: int, load_id: str) -> Claim:
    """The claim a load's card top-up runs under: one key per load, whoever credits it."""
    return Claim(company_id=company_id, key=f"crypto-card-load:{load_id}", token="")


async def _topup(
    session: AsyncSession,
    providers: Providers,
    company_id: int,
    load_id: str,
    card_id: int,
    usd: int,
) -> int | None:
    """The card's top-up for the load, once: run again it resumes or answers the first (None
    when that one failed)."""
    claim = _topup_claim(company_id, load_id)
    earlier: CardFunding | None = await funding.funding_by_key(
        session, company_id, claim.derived_key(funding.LOAD_STEP)
    )
    if earlier is not None:
        if earlier.status == FundingStatus.FAILED:
            return None
        if earlier.status == FundingStatus.PENDING:
            claim.recovery_point = funding.RESERVED
            claim.state = {"funding_id": earlier.id}
        else:
            return earlier.id
    funded = await funding.topup(
        session,
        providers,
        claim=claim,
        company_id=company_id,
        card_id=card_id,
        money=Money(usd, CARD_CURRENCY),
        kind=FundingKind.TOPUP,
        trigger=TRIGGER,
    )
    return funded.funding.id


# ------------------------------------------------------------------------------------- reads


async def load_of(
    session: AsyncSession, providers: Providers, *, company_id: int, user_id: int, load_id: str
) -> CryptoCardLoad:
    """The user's load, refreshed from the rail while pending (a rail that cannot answer
    leaves it as stored)."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    repository = CardLoadRepository(session, company_id)
    found = await repository.find(load_id)
    if found is None or found.user_id != user_id:
        raise CardLoadNotFound()
    if found.status == CardLoadStatus.PENDING.value and providers.crypto is not None:
        try:
            await _refresh(session, providers, found)
        except ApiError as exc:
            log.warning("crypto_card_load_refresh_failed", load_id=load_id, code=exc.code)
            await session.rollback()
    refreshed = await repository.find(load_id)
    assert refreshed is not None
    return refreshed


async def refresh(
    session: AsyncSession, providers: Providers, *, company_id: int, load_id: str
) -> str:
    """Ask the rail about a pending load by its key and apply the answer; the load's status
    after it (reconciliation). Raises the rail's failure."""
    found = await CardLoadRepository(session, company_id).find(load_id)
    assert found is not None
    if found.status == CardLoadStatus.PENDING.value and providers.crypto is not None:
        await _refresh(session, providers, found)
    refreshed = await CardLoadRepository(session, company_id).find(load_id)
    assert refreshed is not None
    return refreshed.status


async def pending_loads(session: AsyncSession, *, company_id: int) -> list[str]:
    return await CardLoadRepository(session, company_id).pending_ids()


async def _refresh(session: AsyncSession, providers: Providers, load: CryptoCardLoad) -> None:
    rail, key, company_id = card_rail(providers), load.provider_key, load.company_id
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
    locked = await CardLoadRepository(session, company_id).find(load.id, lock=True)
    assert locked is not None
    await apply(session, load=locked, answer=answer)
