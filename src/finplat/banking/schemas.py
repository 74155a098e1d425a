from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from fastapi import Query
from pydantic import Field

from finplat.banking.discovery import BalanceView, BudgetView, CardBalanceView, CurrencyTotal
from finplat.banking.identifiers import ACCOUNT_ID_PATTERN, BUDGET_ID_PATTERN
from finplat.kit.fields import SafeText
from finplat.kit.money import STABLECOINS, DecimalAmount, from_minor
from finplat.kit.schemas import MAX_ID, PARAMETER_ID, RequestModel, ResponseModel
from finplat.ledger.schemas import BalanceResponse
from finplat.ledger.service import Balance
from finplat.providers.banking.port import BUDGET_CURRENCIES, BankingDetails
from finplat.providers.names import BankProvider, ProviderType, provider_type
from finplat.provisioning.models import ProviderAccount

BudgetCurrency = StrEnum(  # type: ignore[misc]
    "BudgetCurrency", {code: code for code in BUDGET_CURRENCIES}
)
"""A currency a budget can hold."""

AccountIdField = Annotated[
    str,
    Field(
        pattern=ACCOUNT_ID_PATTERN,
        description="The `AccountId` the service returned (banking accounts listing).",
    ),
]
OptionalUserIdQuery = Annotated[
    int | None,
    Query(
        ge=1,
        le=MAX_ID,
        description="The target user's `Id`. When given, `AccountId` must be this user's "
        "account; without it, the user is the holder of `AccountId`, a banking account of the "
        "company's users.",
    ),
    PARAMETER_ID,
]
"""`userId` where the spec does not require it: the account names the user."""
BudgetIdField = Annotated[
    str,
    Field(
        pattern=BUDGET_ID_PATTERN,
        description="The `BudgetId` the service returned (budgets listing).",
    ),
]


class BankingAccountResponse(ResponseModel):
    AccountId: str = Field(description="Pass it back exactly where an `AccountId` is asked for.")
    UserId: int
    Provider: BankProvider
    ProviderType: ProviderType
    Status: str = Field(description="The provider's approval state of the account.")
    CreatedAt: datetime

    @classmethod
    def of(cls, account: ProviderAccount) -> BankingAccountResponse:
        provider = BankProvider(account.provider)
        assert account.provider_account_id is not None
        return cls(
            AccountId=account.provider_account_id,
            UserId=account.user_id,
            Provider=provider,
            ProviderType=provider_type(provider),
            Status=account.status,
            CreatedAt=account.created_at,
        )


class BankingAccountsResponse(ResponseModel):
    Accounts: list[BankingAccountResponse]


class BudgetBalanceResponse(BalanceResponse):
    BalanceId: str = Field(description="Pass it back exactly where a `BalanceId` is asked for.")
    BudgetId: str
    Provider: BankProvider

    @classmethod
    def of_view(cls, view: BalanceView) -> BudgetBalanceResponse:
        base = BalanceResponse.of(view.totals)
        return cls(
            **base.model_dump(),
            BalanceId=view.balance.id,
            BudgetId=view.balance.budget_id,
            Provider=view.provider,
        )


class BudgetResponse(ResponseModel):
    BudgetId: str = Field(description="Pass it back exactly where a `BudgetId` is asked for.")
    AccountId: str
    UserId: int
    Name: str
    IsDefault: bool
    Provider: BankProvider
    Balances: list[BudgetBalanceResponse]
    CreatedAt: datetime

    @classmethod
    def of(cls, view: BudgetView) -> BudgetResponse:
        b = view.budget
        return cls(
            BudgetId=b.id,
            AccountId=b.account_id,
            UserId=b.user_id,
            Name=b.name,
            IsDefault=b.is_default,
            Provider=BankProvider(b.provider),
            Balances=[BudgetBalanceResponse.of_view(v) for v in view.balances],
            CreatedAt=b.created_at,
        )


class BudgetsResponse(ResponseModel):
    Budgets: list[BudgetResponse]


class BudgetCreate(RequestModel):
    AccountId: AccountIdField
    Name: Annotated[SafeText, Field(max_length=100)]
    Currencies: list[Annotated[BudgetCurrency, Field(strict=False)]] | None = Field(
        default=None,
        min_length=1,
        max_length=len(BUDGET_CURRENCIES),
        description="The currencies the budget holds (default: all of EUR, GBP, USD, USDC, "
        "USDT). Repeats count once.",
    )


class ProviderAvailable(ResponseModel):
    Provider: BankProvider
    Available: DecimalAmount


class CurrencyBalanceResponse(ResponseModel):
    Currency: str
    Posted: DecimalAmount
    PendingDebits: DecimalAmount
    PendingCredits: DecimalAmount
    Available: DecimalAmount
    Providers: list[ProviderAvailable] = Field(description="Available funds per provider.")

    @classmethod
    def of(cls, total: CurrencyTotal) -> CurrencyBalanceResponse:
        c = total.currency
        return cls(
            Currency=c,
            Posted=from_minor(total.posted, c),
            PendingDebits=from_minor(total.pending_debits, c),
            PendingCredits=from_minor(total.pending_credits, c),
            Available=from_minor(total.available, c),
            Providers=[
                ProviderAvailable(Provider=p, Available=from_minor(a, c))
                for p, a in sorted(total.by_provider.items())
            ],
        )


class AggregatedBalanceResponse(ResponseModel):
    UserId: int
    Balances: list[CurrencyBalanceResponse] = Field(
        description="One entry per currency, summed across providers, budgets and cards."
    )


class BankingInfoResponse(ResponseModel):
    AccountId: str
    Provider: BankProvider
    AccountHolderName: str
    Iban: str
    Bic: str
    BankName: str
    BankAddress: str
    AccountNumber: str
    SortCode: str
    Currencies: list[str] = Field(description="Currencies the account's budgets can hold.")

    @classmethod
    def of(cls, details: BankingDetails) -> BankingInfoResponse:
        return cls(
            AccountId=details.account_id,
            Provider=BankProvider.BANKPROV,
            AccountHolderName=details.account_holder_name,
            Iban=details.iban,
            Bic=details.bic,
            BankName=details.bank_name,
            BankAddress=details.bank_address,
            AccountNumber=details.account_number,
            SortCode=details.sort_code,
            Currencies=list(BUDGET_CURRENCIES),
        )


class AssetResponse(ResponseModel):
    """One holding: a budget's balance in one currency (`Source` BUDGET, with `BalanceId` and
    `BudgetId`) or a card's balance (`Source` CARD, with `CardId`)."""

    Source: Literal["BUDGET", "CARD"]
    Currency: str
    Type: Literal["FIAT", "CRYPTO"]
    Provider: BankProvider
    BalanceId: str | None = Field(description="The budget balance; null for a card.")
    BudgetId: str | None = Field(description="The budget; null for a card.")
    CardId: int | None = Field(description="The card's local `Id`; null for a budget balance.")
    Total: DecimalAmount = Field(description="Posted funds, including reserved ones.")
    Available: DecimalAmount

    @classmethod
    def of(cls, view: BalanceView) -> AssetResponse:
        return cls._holding(
            "BUDGET", view.provider, view.totals, view.balance.id, view.balance.budget_id, None
        )

    @classmethod
    def of_card(cls, view: CardBalanceView) -> AssetResponse:
        return cls._holding("CARD", view.provider, view.totals, None, None, view.card.id)

    @classmethod
    def _holding(
        cls,
        source: Literal["BUDGET", "CARD"],
        provider: BankProvider,
        totals: Balance,
        balance_id: str | None,
        budget_id: str | None,
        card_id: int | None,
    ) -> AssetResponse:
        c = totals.currency
        return cls(
            Source=source,
            Currency=c,
            Type="CRYPTO" if c in STABLECOINS else "FIAT",
            Provider=provider,
            BalanceId=balance_id,
            BudgetId=budget_id,
            CardId=card_id,
            Total=from_minor(totals.posted, c),
            Available=from_minor(totals.available, c),
        )


class AssetsResponse(ResponseModel):
    UserId: int
    Assets: list[AssetResponse]
