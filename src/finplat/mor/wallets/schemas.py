"""Wire format of the MOR merchant's wallets and balances."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from finplat.kit.money import CURRENCY_CODES, DecimalAmount, from_minor
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.ledger.service import AccountTotals, Balance
from finplat.mor.wallets.service import CurrencyBalances


class MorWalletOpenRequest(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"Currency": "EUR"}})

    Currency: str = Field(
        description="ISO 4217 code, or USDC / USDT.",
        examples=["EUR"],
        json_schema_extra={"enum": list(CURRENCY_CODES)},
    )


class MorWallet(ResponseModel):
    Currency: str
    Available: DecimalAmount = Field(description="Posted minus pending debits: what can be spent.")
    Posted: DecimalAmount = Field(description="Settled funds, including those reserved.")
    PendingDebits: DecimalAmount = Field(
        description="Reserved for operations in progress (a card top-up the provider has not "
        "confirmed yet)."
    )
    PendingCredits: DecimalAmount = Field(
        description="Announced incoming funds, not yet spendable (a funding being confirmed)."
    )

    @classmethod
    def of(cls, balance: Balance) -> MorWallet:
        currency = balance.currency
        return cls(
            Currency=currency,
            Available=from_minor(balance.available, currency),
            Posted=from_minor(balance.posted, currency),
            PendingDebits=from_minor(balance.pending_debits, currency),
            PendingCredits=from_minor(balance.pending_credits, currency),
        )


class MorWalletList(ResponseModel):
    Wallets: list[MorWallet] = Field(description="One per currency, by currency code.")


class MorCardsBalance(ResponseModel):
    Count: int = Field(description="How many of the merchant's cards hold this currency.")
    Available: DecimalAmount
    Posted: DecimalAmount
    PendingDebits: DecimalAmount = Field(description="Purchases held, unloads in progress.")
    PendingCredits: DecimalAmount = Field(description="Top-ups the provider has not confirmed.")

    @classmethod
    def of(cls, totals: AccountTotals) -> MorCardsBalance:
        currency = totals.currency
        return cls(
            Count=totals.accounts,
            Available=from_minor(totals.available, currency),
            Posted=from_minor(totals.posted, currency),
            PendingDebits=from_minor(totals.pending_debits, currency),
            PendingCredits=from_minor(totals.pending_credits, currency),
        )


class MorCurrencyBalance(ResponseModel):
    Currency: str
    Wallet: MorWallet | None = Field(description="Null when the merchant has no wallet in it.")
    Cards: MorCardsBalance | None = Field(description="Null when no card holds this currency.")

    @classmethod
    def of(cls, found: CurrencyBalances) -> MorCurrencyBalance:
        return cls(
            Currency=found.currency,
            Wallet=None if found.wallet is None else MorWallet.of(found.wallet),
            Cards=None if found.cards is None else MorCardsBalance.of(found.cards),
        )


class MorBalances(ResponseModel):
    Currencies: list[MorCurrencyBalance] = Field(description="By currency code.")
