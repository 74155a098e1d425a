"""Quotes and FX trades between two currencies of one budget (spec, "FX trade execution").

Quote: resolve the account (the named user's, or any of the company's), the budget (given,
or the account's default) and its two currencies, then ask the provider. A transient
provider failure is not an error: the answer says `IsAvailable` false with
`QUOTE_TEMPORARILY_UNAVAILABLE` and `RetryAfterSeconds`, and the client asks again (the call
is not retried here). A provider refusal stays an error.

Trade (phases, each a recovery point of the request's Idempotency-Key):
  started  -> claim the quote (OPEN -> EXECUTED, one conditional UPDATE), reserve the sell
              amount (budget -> settlement, pending), record a PENDING `FX_TRADE` transaction
              carrying the provider key: one commit
  reserved -> the provider executes the quote with that key:
              COMPLETED   -> post the reservation, credit settlement -> budget in the buy
                             currency, transaction COMPLETED
              PENDING, timeout, unavailable -> keep it all PENDING; the refresher settles it
              refused     -> release the reservation, transaction FAILED, quote reopened,
                             the refusal answered (400 for expired / executed / no funds)
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts, budgets
from finplat.banking.accounts import BudgetNotFound
from finplat.banking.discovery import NO_BANKING
from finplat.banking.fx.models import BankingFxQuote, QuoteStatus
from finplat.banking.fx.repository import QuoteRepository
from finplat.banking.models import BankingBudget
from finplat.banking.repository import BudgetRepository
from finplat.errors import ApiError, Conflict, NotFound, ValidationFailed
from finplat.events import service as events
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import from_minor, requested_amount
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import Reservation, TransferAlreadyResolved
from finplat.providers.banking.port import BankingProvider, FixedSide, ProviderTrade, TradeStatus
from finplat.providers.calls import CallPolicy, commit_then_call
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.provisioning.models import ProviderAccount
from finplat.transactions import service as transactions
from finplat.transactions.kinds import TransactionStatus, TransactionType
from finplat.transactions.models import Transaction
from finplat.users import service as users

log = structlog.get_logger("finplat.banking.fx")
PROVIDER = BankProvider.BANKPROV.value
RETRY_AFTER_SECONDS = 5
LEDGER_CODE = "banking.fx_trade"
RESERVED = "reserved"
REJECTED = "rejected"
# A trade the provider has no record of is given up once its quote has expired (an expired
# quote can no longer be executed), with a margin for clocks and calls still in flight.
LOST_TRADE_GRACE = timedelta(minutes=5)
PROVIDER_QUOTE_EXPIRED = "PROVIDER_QUOTE_EXPIRED"
PROVIDER_QUOTE_EXECUTED = "QUOTE_ALREADY_EXECUTED"


class QuoteNotFound(NotFound):
    code = "QUOTE_NOT_FOUND"
    message = "No quote with that QuoteId for this account."


class QuoteIdRequired(ValidationFailed):
    """The spec lists `QuoteId` as optional, but a trade executes a quote: without one there
    is nothing to execute, and executing some other open quote is not ours to guess."""

    code = "QUOTE_ID_REQUIRED"
    message = "Send the QuoteId of the quote to execute (from a quote response)."


class QuoteExpired(Conflict):
    """A well-formed request the quote's state refuses: 409, as every such refusal."""

    code = "QUOTE_EXPIRED"
    message = "The quote has expired; ask for a new one."


class QuoteAlreadyExecuted(Conflict):
    code = "QUOTE_ALREADY_EXECUTED"
    message = "The quote was already executed; ask for a new one."


class TradeRejected(ApiError):
    """The provider's refusal of a trade, replayed when the rejected trade is resumed."""


@dataclass(frozen=True)
class QuoteOutcome:
    account_id: str
    budget_id: str
    quote: BankingFxQuote | None  # None: the provider could not quote right now


@dataclass(frozen=True)
class TradeOutcome:
    transaction: Transaction
    quote: BankingFxQuote


def new_quote_id() -> str:
    return f"qt_{secrets.token_hex(12)}"


# ------------------------------------------------------------------------------------ quotes


async def request_quote(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int | None,
    account_id: str,
    budget_id: str | None,
    sell_currency: str,
    buy_currency: str,
    amount: Decimal,
    fixed_side: FixedSide,
) -> QuoteOutcome:
    if sell_currency == buy_currency:  # the schema says so too
        raise ValidationFailed(
            validation_errors={"BuyCurrency": ["Must differ from SellCurrency."]}
        )
    fixed = requested_amount(
        amount, sell_currency if fixed_side is FixedSide.SELL else buy_currency
    )
    account = await accounts.account_of(
        session, company_id=company_id, user_id=user_id, account_id=account_id
    )
    banking = configured(providers.banking, NO_BANKING)
    budget = await _quote_budget(
        session,
        banking,
        providers.policy,
        company_id=company_id,
        account=account,
        budget_id=budget_id,
    )
    await accounts.budget_holds(
        session, company_id=company_id, budget=budget, currencies=(sell_currency, buy_currency)
    )
    provider_budget_id = budget.provider_budget_id
    try:
        provided = await commit_then_call(
            session,
            providers.policy,
            provider=PROVIDER,
            operation="quote",
            call=lambda: banking.quote(
                company_id=company_id,
                budget_id=provider_budget_id,
                sell_currency=sell_currency,
                buy_currency=buy_currency,
                amount_minor=fixed.minor,
                fixed_side=fixed_side,
            ),
            idempotent=False,  # nothing to deduplicate: the client simply asks again
        )
    except ProviderUnavailable:
        log.info("fx_quote_unavailable", company_id=company_id)
        return QuoteOutcome(budget.account_id, budget.id, None)
    quote = await QuoteRepository(session, company_id).create(
        {
            "id": new_quote_id(),
            "user_id": account.user_id,
            "account_id": budget.account_id,
            "budget_id": budget.id,
            "provider": PROVIDER,
            "provider_quote_id": provided.quote_id,
            "sell_currency": provided.sell_currency,
            "buy_currency": provided.buy_currency,
            "sell_amount_minor": provided.sell_amount_minor,
            "buy_amount_minor": provided.buy_amount_minor,
            "rate": str(provided.rate),
            "fixed_side": provided.fixed_side.value,
            "expires_at": provided.expires_at,
            "status": QuoteStatus.OPEN.value,
        }
    )
    return QuoteOutcome(quote.account_id, budget.id, quote)


async def _quote_budget(
    session: AsyncSession,
    banking: BankingProvider,
    policy: CallPolicy,
    *,
    company_id: int,
    account: ProviderAccount,
    budget_id: str | None,
) -> BankingBudget:
    """The given budget, which must be in the account; or the account's default budget."""
    if budget_id is not None:
        budget = await accounts.user_budget(
            session, company_id=company_id, user_id=account.user_id, budget_id=budget_id
        )
        if budget.account_id != account.provider_account_id:
            raise BudgetNotFound("No budget with that BudgetId in this account.")
        return budget
    found = await _default_budget(session, company_id, account)
    if found is None:  # not seen yet: learn the account's budgets from the provider
        await budgets.sync(session, banking, policy, company_id=company_id, account=account)
        found = await _default_budget(session, company_id, account)
    if found is None:
        raise BudgetNotFound("The account has no default budget.")
    return found


async def _default_budget(
    session: AsyncSession, company_id: int, account: ProviderAccount
) -> BankingBudget | None:
    for budget in await BudgetRepository(session, company_id).of_user(account.user_id):
        if budget.is_default and budget.account_id == account.provider_account_id:
            return budget
    return None


# ------------------------------------------------------------------------------------ trades


async def quote_for_trade(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int | None,
    account_id: str | None,
    quote_id: str | None,
) -> BankingFxQuote:
    """The quote to execute: it must be the account's (404 `QUOTE_NOT_FOUND` for an unknown
    quote, another company's, or another account's). Without `account_id` the quote's own
    account is used, which must be the named user's. No `quote_id` is 400
    `QUOTE_ID_REQUIRED`."""
    if quote_id is None:
        raise QuoteIdRequired(validation_errors={"QuoteId": ["Field required."]})
    quotes = QuoteRepository(session, company_id)
    if account_id is not None:
        account = await accounts.account_of(
            session, company_id=company_id, user_id=user_id, account_id=account_id
        )
        quote = await quotes.find(quote_id)
        if quote is None or quote.account_id != account.provider_account_id:
            raise QuoteNotFound()
        return quote
    assert user_id is not None, "an account is required when no user is named"
    quote = await quotes.find(quote_id)
    if quote is None or quote.user_id != user_id:
        await users.get_user(session, company_id=company_id, user_id=user_id)
        raise QuoteNotFound()
    await accounts.user_account(
        session, company_id=company_id, user_id=user_id, account_id=quote.account_id
    )
    return quote


async def execute(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    quote: BankingFxQuote,
) -> TradeOutcome:
    banking = configured(providers.banking, NO_BANKING)
    quotes = QuoteRepository(session, company_id)
    # Kept when this request reserved: the quote as it left it, and the reservation to post
    # without reading it again. A resumed request reads both.
    reservation: Reservation | None = None
    if claim.recovery_point == idempotency.STARTED:
        transaction, reservation = await _reserve(
            session, claim=claim, company_id=company_id, quote=quote
        )
        await idempotency.checkpoint(session, claim, RESERVED, transaction_id=transaction.id)
    else:
        # Resuming: commit the key takeover so no lock is held across the provider call.
        await idempotency.checkpoint(session, claim, claim.recovery_point)
        if claim.recovery_point == REJECTED:
            refusal = claim.state.get("refusal") or {}
            raise TradeRejected(
                refusal.get("message"), status=refusal.get("status"), code=refusal.get("code")
            )
        transaction = await transactions.get(
            session, company_id=company_id, transaction_id=int(claim.state["transaction_id"])
        )
    provider_key = transaction.provider_key
    assert provider_key is not None
    provider_quote_id = quote.provider_quote_id
    try:
        trade = await commit_then_call(
            session,  # ends any read since the checkpoint: no lock across the call
            providers.policy,
            provider=PROVIDER,
            operation="execute_trade",
            call=lambda: banking.execute_trade(
                company_id=company_id, quote_id=provider_quote_id, idempotency_key=provider_key
            ),
            idempotent=True,  # it carries the provider key
        )
    except ProviderRejected as exc:
        if await lock_pending(session, transaction):
            await fail(session, company_id=company_id, transaction=transaction, reason=exc.message)
            if exc.code != PROVIDER_QUOTE_EXECUTED:
                await quotes.reopen(quote.id, transaction_id=transaction.id, now=utcnow())
        refusal = _refusal(exc)
        await idempotency.checkpoint(
            session,
            claim,
            REJECTED,
            refusal={"status": refusal.status, "code": refusal.code, "message": refusal.message},
        )
        raise refusal from None
    except ProviderUnavailable:
        # Uncertain: the provider may have traded. Everything stays PENDING for the refresher.
        log.warning("fx_trade_outcome_unknown", transaction_id=transaction.id)
    else:
        if await lock_pending(session, transaction):
            await apply_trade(
                session,
                company_id=company_id,
                transaction=transaction,
                trade=trade,
                reservation=reservation,
            )
    if reservation is None:
        quote = await _reloaded(quotes, quote.id)
    return TradeOutcome(transaction, quote)


async def _reserve(
    session: AsyncSession, *, claim: Claim, company_id: int, quote: BankingFxQuote
) -> tuple[Transaction, Reservation]:
    """Claim the quote, reserve the sell amount and record the PENDING transaction; the quote
    object then shows what its claim and link wrote."""
    quotes = QuoteRepository(session, company_id)
    now = utcnow()
    if not await quotes.claim(quote, now=now):
        current = await _reloaded(quotes, quote.id)
        if current.status == QuoteStatus.EXECUTED.value:
            raise QuoteAlreadyExecuted()
        raise QuoteExpired()
    sell = quote.sell_currency
    source, settlement = await budgets.with_settlement(
        session, company_id=company_id, budget_id=quote.budget_id, currency=sell
    )
    # No expiry: the reservation lasts until the provider's answer settles it.
    reservation = await ledger.reserve(
        session,
        company_id=company_id,
        legs=[
            Leg(source.id, -quote.sell_amount_minor),
            Leg(settlement.id, quote.sell_amount_minor),
        ],
        code=LEDGER_CODE,
        expires_at=None,
        reference=quote.id,
        accounts=(source, settlement),
    )
    transaction = await transactions.record(
        session,
        company_id=company_id,
        user_id=quote.user_id,
        type_=TransactionType.FX_TRADE,
        status=TransactionStatus.PENDING,
        provider=PROVIDER,
        amount_minor=quote.sell_amount_minor,
        currency=sell,
        budget_id=quote.budget_id,
        provider_key=claim.derived_key("fx-trade"),
        ledger_pending_id=reservation.result.transfer_id,
        metadata={
            "quoteId": quote.id,
            "accountId": quote.account_id,
            "buyAmount": from_minor(quote.buy_amount_minor, quote.buy_currency),
            "buyCurrency": quote.buy_currency,
            "exchangeRate": quote.rate,
            "fixedSide": quote.fixed_side,
        },
    )
    await quotes.link_transaction(quote, transaction.id)
    return transaction, reservation


def _refusal(exc: ProviderRejected) -> ApiError:
    if exc.code == PROVIDER_QUOTE_EXPIRED:
        return QuoteExpired()
    if exc.code == PROVIDER_QUOTE_EXECUTED:
        return QuoteAlreadyExecuted()
    return exc


async def _reloaded(quotes: QuoteRepository, quote_id: str) -> BankingFxQuote:
    quote = await quotes.reload(quote_id)
    assert quote is not None
    return quote


# -------------------------------------------------------------------------------- settlement


async def lock_pending(session: AsyncSession, transaction: Transaction) -> bool:
    """Lock the trade's transaction and re-read it; True while it is still PENDING.

    Every settler (the execute that made the call, each refresh) calls this after its
    provider call: another may have settled the trade while the call was in flight, and the
    copy read before it is then stale. Under the lock one settles; the others see it settled
    and answer it as it is.
    """
    await session.refresh(transaction, with_for_update=True)
    return transaction.status == TransactionStatus.PENDING.value


async def apply_trade(
    session: AsyncSession,
    *,
    company_id: int,
    transaction: Transaction,
    trade: ProviderTrade,
    reservation: Reservation | None = None,
) -> None:
    """Apply what the provider says about the trade (exactly once: the ledger refuses to
    resolve a reservation twice, so a concurrent settler changes nothing). `reservation`:
    the sell side's, when this request made it."""
    if trade.status is TradeStatus.COMPLETED:
        await complete(
            session,
            company_id=company_id,
            transaction=transaction,
            trade=trade,
            reservation=reservation,
        )
    elif trade.status is TradeStatus.FAILED:
        await fail(
            session,
            company_id=company_id,
            transaction=transaction,
            reason=trade.failure_reason or "The provider did not execute the trade.",
            trade_id=trade.trade_id,
        )
    elif transaction.provider_reference is None:
        transaction.provider_reference = trade.trade_id
        await session.flush()


async def complete(
    session: AsyncSession,
    *,
    company_id: int,
    transaction: Transaction,
    trade: ProviderTrade,
    reservation: Reservation | None = None,
) -> bool:
    if transaction.status != TransactionStatus.PENDING.value:
        return False
    assert transaction.ledger_pending_id is not None
    assert transaction.budget_id is not None
    try:
        await ledger.post_pending(
            session,
            company_id=company_id,
            pending_id=transaction.ledger_pending_id,
            details={"trade_id": trade.trade_id},
            reservation=reservation,
        )
    except TransferAlreadyResolved:
        return False
    buy = trade.buy_currency
    target, settlement = await budgets.with_settlement(
        session, company_id=company_id, budget_id=transaction.budget_id, currency=buy
    )
    await ledger.post_transfer(
        session,
        company_id=company_id,
        legs=[Leg(settlement.id, -trade.buy_amount_minor), Leg(target.id, trade.buy_amount_minor)],
        code=LEDGER_CODE,
        reference=trade.trade_id,
        accounts=(settlement, target),
    )
    received = from_minor(trade.buy_amount_minor, buy)
    await transactions.settle(
        session,
        transaction,
        status=TransactionStatus.COMPLETED,
        provider_reference=trade.trade_id,
        metadata={"tradeId": trade.trade_id, "buyAmount": received},
    )
    await events.record(
        session,
        company_id=company_id,
        type_="fxtrade.completed",
        domain="fxtrade",
        provider=PROVIDER,
        data={
            "transactionId": transaction.id,
            "tradeId": trade.trade_id,
            "userId": transaction.user_id,
            "budgetId": transaction.budget_id,
            "sellCurrency": transaction.currency,
            "sellAmount": from_minor(transaction.amount_minor, transaction.currency),
            "buyCurrency": buy,
            "buyAmount": received,
            "exchangeRate": trade.rate,
        },
    )
    return True


async def fail(
    session: AsyncSession,
    *,
    company_id: int,
    transaction: Transaction,
    reason: str,
    trade_id: str | None = None,
) -> bool:
    if transaction.status != TransactionStatus.PENDING.value:
        return False
    assert transaction.ledger_pending_id is not None
    try:
        await ledger.void_pending(
            session,
            company_id=company_id,
            pending_id=transaction.ledger_pending_id,
            details={"reason": reason[:200]},
        )
    except TransferAlreadyResolved:
        return False
    await transactions.settle(
        session,
        transaction,
        status=TransactionStatus.FAILED,
        reason=reason,
        provider_reference=trade_id,
    )
    await events.record(
        session,
        company_id=company_id,
        type_="fxtrade.failed",
        domain="fxtrade",
        provider=PROVIDER,
        data={
            "transactionId": transaction.id,
            "tradeId": trade_id,
            "userId": transaction.user_id,
            "budgetId": transaction.budget_id,
            "reason": reason,
        },
    )
    return True


async def settle_lost_trade(
    session: AsyncSession, *, company_id: int, transaction: Transaction
) -> bool:
    """The provider has no trade with the transaction's key: once the quote can no longer
    be executed, nothing can arrive any more, so the reservation is released."""
    quote_id = transactions.metadata_of(transaction).get("quoteId")
    quote = await QuoteRepository(session, company_id).find(str(quote_id)) if quote_id else None
    if quote is not None and utcnow() < quote.expires_at + LOST_TRADE_GRACE:
        return False
    return await fail(
        session,
        company_id=company_id,
        transaction=transaction,
        reason="The provider never received the trade.",
    )
