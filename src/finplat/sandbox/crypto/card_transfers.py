"""Sandbox: the rail decides a transfer toward the card provider, through the same callback
path a real rail's notification takes (`card_transfer.updated`, delivered at once).

A delivery to the card provider (`bankprov-to-cardprov`) completed: the rail collects the
fiat from the budget (a transfer at the banking provider from the budget to the company's
master account there) and the USDC reaches the card's deposit address at the card provider
(the card provider's own deposit: `card.deposit.received`, and the card's DEPOSIT auto top-up
when it is on). A crypto card load confirmed: final on chain, and the card is credited at
once (what the background job would do within seconds)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.banking import accounts
from finplat.cards import lookup
from finplat.cards.funding import deposits
from finplat.crypto.addresses.service import NO_CRYPTO
from finplat.crypto.cardloads import service as cardloads
from finplat.crypto.cardloads.models import CardLoadStatus, CryptoCardLoad
from finplat.crypto.cardprov.repository import CardProviderQuoteRepository
from finplat.crypto.exchange import service as exchange
from finplat.crypto.transfers.models import CryptoTransfer, TransferKind, TransferStatus
from finplat.errors import Conflict
from finplat.idempotency.service import Claim
from finplat.kit.money import Money
from finplat.providers.calls import commit_then_call
from finplat.providers.crypto.card_rails import SandboxCardTransferSimulation
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.providers.sandbox import delivery as sandbox_delivery
from finplat.sandbox.crypto import conversions
from finplat.sandbox.crypto.conversions import TransferNotPending


class CardLoadNotPending(Conflict):
    code = "CARD_LOAD_NOT_PENDING"
    message = "The card load is already settled on chain."


def _simulator(providers: Providers) -> SandboxCardTransferSimulation:
    rail = configured(providers.crypto, NO_CRYPTO)
    if not isinstance(rail, SandboxCardTransferSimulation):
        raise Conflict("The crypto rail cannot simulate transfers to the card provider.")
    return rail


async def _decide(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    reference: str,
    completed: bool,
) -> None:
    rail = _simulator(providers)
    await commit_then_call(
        session,
        providers.policy,
        provider=configured(providers.crypto, NO_CRYPTO).name,
        operation="settle_card_transfer",
        call=lambda: rail.settle_card_transfer(
            company_id=company_id, reference=reference, completed=completed
        ),
        idempotent=False,
    )
    await sandbox_delivery.deliver_due(factory, secret=secret, company_id=company_id)


async def settle_delivery(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    user_id: int,
    transfer_id: str,
    completed: bool,
) -> CryptoTransfer:
    transfer = await exchange.transfer_of(
        session, providers, company_id=company_id, user_id=user_id, transfer_id=transfer_id
    )
    if transfer.kind != TransferKind.BANKPROV_TO_CARDPROV.value:
        raise exchange.TransferNotFound()
    if transfer.status != TransferStatus.PENDING.value or transfer.provider_reference is None:
        raise TransferNotPending()
    reference = transfer.provider_reference
    if completed:
        assert transfer.quote_id is not None
        assert transfer.budget_id is not None
        assert transfer.fiat_currency is not None
        assert transfer.fiat_amount_minor is not None
        quote = await CardProviderQuoteRepository(session, company_id).find(transfer.quote_id)
        budget = await accounts.find_budget(
            session, company_id=company_id, budget_id=transfer.budget_id
        )
        assert quote is not None
        assert budget is not None
        # The card provider must take the deposit before the banking provider pays for it.
        card = await lookup.find_card(session, company_id=company_id, card_id=quote.card_id)
        card.refuse_if_cancelled()
        bank = configured(providers.banking, "No banking provider is configured.")
        key, source = f"{transfer.provider_key}:collect", budget.provider_budget_id
        fiat, amount = transfer.fiat_currency, transfer.fiat_amount_minor
        await commit_then_call(
            session,
            providers.policy,
            provider=BankProvider.BANKPROV.value,
            operation="transfer",
            call=lambda: bank.transfer(
                company_id=company_id,
                idempotency_key=key,
                from_budget_id=source,
                to_budget_id=None,
                currency=fiat,
                amount_minor=amount,
            ),
            idempotent=True,
        )
        await deposits.receive(
            session,
            providers,
            claim=Claim(company_id=company_id, key=f"cardprov-arrival:{transfer_id}", token=""),
            company_id=company_id,
            card_id=quote.card_id,
            money=Money(transfer.amount_minor - transfer.fee_minor, transfer.currency),
        )
    await _decide(
        session,
        providers,
        factory,
        secret=secret,
        company_id=company_id,
        reference=reference,
        completed=completed,
    )
    return await exchange.transfer_of(
        session, providers, company_id=company_id, user_id=user_id, transfer_id=transfer_id
    )


async def settle_card_to_bank(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    user_id: int,
    transfer_id: str,
    completed: bool,
) -> CryptoTransfer:
    """A `cardprov-to-bankprov` conversion decided: the sandbox conversion's move (completed,
    the budget is paid at the banking provider), then the transfer is read, which puts a
    failed conversion's money back on the card at once."""
    transfer = await exchange.transfer_of(
        session, providers, company_id=company_id, user_id=user_id, transfer_id=transfer_id
    )
    if transfer.kind != TransferKind.CARDPROV_TO_BANKPROV.value:
        raise exchange.TransferNotFound()
    return await conversions.settle(
        session,
        providers,
        factory,
        secret=secret,
        company_id=company_id,
        user_id=user_id,
        transfer_id=transfer_id,
        completed=completed,
    )


async def settle_load(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    user_id: int,
    load_id: str,
    confirmed: bool,
) -> CryptoCardLoad:
    load = await cardloads.load_of(
        session, providers, company_id=company_id, user_id=user_id, load_id=load_id
    )
    if load.status != CardLoadStatus.PENDING.value or load.provider_reference is None:
        raise CardLoadNotPending()
    await _decide(
        session,
        providers,
        factory,
        secret=secret,
        company_id=company_id,
        reference=load.provider_reference,
        completed=confirmed,
    )
    if confirmed:
        await cardloads.credit_load(factory, providers, company_id=company_id, load_id=load_id)
    return await cardloads.load_of(
        session, providers, company_id=company_id, user_id=user_id, load_id=load_id
    )
