"""Card balances: what each card's provider holds for it against the card's ledger account.

Every card the provider has issued and the platform has not cancelled is checked, one provider
call (`CardProgram.card`) per card. Cancelled cards are left out: cancelling empties the card
first and the provider stops exposing it; cards not issued yet hold nothing.

**Signs.** The card's ledger account (`finplat.cards.funding.card_account`, code `card`) is
credited when money goes onto the card (a top-up: master -Value, card +load, fee revenue +fee)
and debited when money leaves it (an unload, a decline fee, a purchase). Positive is money on
the card, the sign of the provider's `ProviderCard.balance_minor` (what the card can spend).

**What the provider should hold**, from the ledger's **available** balance (posted - pending
debits), as for budgets:
* A purchase: the provider takes the amount off the card when it authorizes it (the hold); the
  ledger records the hold as a pending debit of the card (already out of available) and posts
  it at clearing (still out). Both states compare equal; a reversed hold is restored at the
  provider and voided in the ledger.
* A top-up is reserved in the ledger first, as a pending *credit* of the card (not in
  available), and loaded at the provider afterwards. Reserved, not loaded yet: the provider
  holds `available`. Loaded but not posted yet (the provider's answer was lost to a timeout):
  it holds `available + load`.
* An unload or a decline-fee collection is reserved first as a pending *debit* (already out of
  available), then unloaded at the provider. Not unloaded yet: the provider holds
  `available + amount`; unloaded: `available`.

No reconciliation refresher settles card movements (a retry of the request with the same
Idempotency-Key resumes them), so one whose provider outcome is unknown can stay pending for
long. Instead of reporting it as a difference, the checker asks the provider whether each
pending movement of the card happened (`CardProgram.movement_by_key`, under the key it was
made with) and expects

    provider = available + loads of pending top-ups the provider made
                         + amounts of pending unloads the provider has not made

A movement drops out of the sum once it is posted (or voided after a refusal), so settled
money never shows a difference. A reported difference is `provider - expected`, with the
expected balance as `ledger` (its note says when movements in flight were counted). The
provider is read first, the ledger last; a difference caught while a movement is between the
two reads disappears at the next run.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.cards import programs
from finplat.cards.funding import service as funding
from finplat.cards.funding.models import CardFunding
from finplat.cards.models import Card
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.money import from_minor
from finplat.ledger import repository as ledger_repository
from finplat.providers.cards.port import CardProgram
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.registry import Providers
from finplat.reconciliation import repository
from finplat.reconciliation.report import (
    NO_PROVIDER,
    BalanceCheck,
    BalanceDifference,
    UncheckedAccount,
)

SOURCE = "cards"
LOADS = frozenset(kind.value for kind in funding.LOADS)


def provider_effect(row: CardFunding) -> int:
    """What a card movement puts on (+) or takes off (-) the card at the provider: a top-up
    loads the Value less its fee and the decline fee it paid (as `funding.topup` does); an
    unload or a decline fee takes off the whole amount."""
    if row.kind in LOADS:
        return max(row.amount_minor - row.fee_minor - row.fee_paid_minor, 0)
    return -row.amount_minor


class CardBalances:
    """Each card's balance at its card programme against the card's ledger account."""

    source = SOURCE

    async def companies(self, session: AsyncSession) -> list[int]:
        return await repository.companies_with_card_balances(session)

    async def check(
        self,
        factory: async_sessionmaker[AsyncSession],
        providers: Providers,
        *,
        company_id: int,
    ) -> BalanceCheck:
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            cards = await repository.card_balances(session, company_id=company_id)
        result = BalanceCheck()
        for card in cards:
            await self._check_card(factory, providers, card, result)
        return result

    async def _check_card(
        self,
        factory: async_sessionmaker[AsyncSession],
        providers: Providers,
        card: Card,
        result: BalanceCheck,
    ) -> None:
        company_id, card_ref = card.company_id, card.provider_card_id
        assert card_ref is not None

        def unchecked(reason: str) -> None:
            result.unchecked.append(
                UncheckedAccount(
                    company_id, card.user_id, card.provider, card_ref, 1, reason, card_id=card.id
                )
            )

        program = providers.card_programs.get(card.provider)
        if program is None:
            unchecked(NO_PROVIDER)
            return
        try:
            seen = await programs.provider_view(None, providers, card)
        except (ProviderUnavailable, ProviderRejected) as exc:
            unchecked(exc.code)
            return
        if seen is None:
            available = (await self._ledger(factory, card))[0]
            result.checked += 1
            result.differences.append(
                self._difference(card, available, 0, "the provider reports no such card")
            )
            return
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            in_flight = await repository.pending_card_fundings(
                session, company_id=company_id, card_id=card.id
            )
        made: dict[int, bool] = {}
        try:
            for row in in_flight:
                if provider_effect(row):
                    made[row.id] = await self._made(providers, program, company_id, row)
        except (ProviderUnavailable, ProviderRejected) as exc:
            unchecked(exc.code)
            return
        available, still_pending = await self._ledger(factory, card)
        expected, counted = available, 0
        for row in still_pending:
            effect = provider_effect(row)
            # A reservation newer than the provider's answer cannot be in that answer.
            done = made.get(row.id, False)
            if effect > 0 and done:
                expected += effect
                counted += 1
            elif effect < 0 and not done:
                expected -= effect
                counted += 1
        result.checked += 1
        if seen.balance_minor != expected:
            note = None
            if counted:
                note = (
                    f"ledger available {from_minor(available, card.currency)}, with "
                    f"{counted} card movement(s) in flight counted as the provider made them"
                )
            result.differences.append(self._difference(card, expected, seen.balance_minor, note))

    async def _made(
        self, providers: Providers, program: CardProgram, company_id: int, row: CardFunding
    ) -> bool:
        """Whether the provider made the movement (it deduplicates by this key)."""
        found = await funding.movement_under_key(
            None, providers, program, company_id=company_id, key=row.provider_key
        )
        return found is not None and found.status == "COMPLETED"

    async def _ledger(
        self, factory: async_sessionmaker[AsyncSession], card: Card
    ) -> tuple[int, list[CardFunding]]:
        """The card account's available balance and the movements still pending, read
        together after the provider answered."""
        async with unit_of_work(factory) as session:
            bind_company(session, card.company_id)
            pending = await repository.pending_card_fundings(
                session, company_id=card.company_id, card_id=card.id
            )
            if card.ledger_account_id is None:
                return 0, pending
            totals = await ledger_repository.balance_totals_many(
                session, account_ids=[card.ledger_account_id]
            )
        posted, pending_debits, _ = totals.get(card.ledger_account_id, (0, 0, 0))
        return posted - pending_debits, pending

    def _difference(
        self, card: Card, ledger_minor: int, provider_minor: int, note: str | None
    ) -> BalanceDifference:
        return BalanceDifference(
            card.company_id,
            card.user_id,
            None,
            card.currency,
            ledger_minor=ledger_minor,
            provider_minor=provider_minor,
            source=card.provider,
            note=note,
            card_id=card.id,
        )
