"""The MOR merchant's wallets and balances."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path

from finplat.errors import ValidationFailed, error_responses
from finplat.http.routing import CurrentPrincipal, DbSession
from finplat.kit.money import CURRENCY_CODES, UnknownCurrency, normalize_currency
from finplat.mor.access import PREFIX, mor_router
from finplat.mor.wallets import service
from finplat.mor.wallets.schemas import (
    MorBalances,
    MorCurrencyBalance,
    MorWallet,
    MorWalletList,
    MorWalletOpenRequest,
)

router = mor_router(tags=["MOR"])

CurrencyPath = Annotated[
    str,
    Path(
        description="ISO 4217 code, or USDC / USDT.",
        json_schema_extra={"enum": list(CURRENCY_CODES)},
    ),
]


def _currency(code: str, field: str) -> str:
    try:
        return normalize_currency(code)
    except UnknownCurrency as exc:
        raise ValidationFailed(validation_errors={field: [str(exc)]}) from None


@router.get(
    f"{PREFIX}/wallets",
    response_model=MorWalletList,
    summary="The MOR merchant's wallets",
    description="One wallet per currency: the company's master account, which company "
    "funding credits and card top-ups pay from.",
    responses=error_responses(),
)
async def mor_wallets(session: DbSession, principal: CurrentPrincipal) -> MorWalletList:
    found = await service.wallets(session, company_id=principal.company_id)
    return MorWalletList(Wallets=[MorWallet.of(b) for b in found])


@router.post(
    f"{PREFIX}/wallets",
    response_model=MorWallet,
    summary="Open a wallet in a currency",
    description="Opens the merchant's wallet in `Currency`, empty; one already open is "
    "answered as it stands (the call is safe to repeat). A funding in a currency opens its "
    "wallet too.",
    responses=error_responses(400),
)
async def mor_open_wallet(
    body: MorWalletOpenRequest, session: DbSession, principal: CurrentPrincipal
) -> MorWallet:
    currency = _currency(body.Currency, "Currency")
    found = await service.open_wallet(session, company_id=principal.company_id, currency=currency)
    return MorWallet.of(found)


@router.get(
    f"{PREFIX}/wallets/{{currency}}",
    response_model=MorWallet,
    summary="The MOR merchant's wallet in one currency",
    description="404 `WALLET_NOT_FOUND` when the merchant has no wallet in it.",
    responses=error_responses(400, 404),
)
async def mor_wallet(
    currency: CurrencyPath, session: DbSession, principal: CurrentPrincipal
) -> MorWallet:
    code = _currency(currency, "currency")
    found = await service.wallet(session, company_id=principal.company_id, currency=code)
    return MorWallet.of(found)


@router.get(
    f"{PREFIX}/balances",
    response_model=MorBalances,
    summary="The MOR merchant's balances",
    description="Per currency: the wallet and the sum of the merchant's cards' balances, "
    "both from the ledger.",
    responses=error_responses(),
)
async def mor_balances(session: DbSession, principal: CurrentPrincipal) -> MorBalances:
    found = await service.balances(session, company_id=principal.company_id)
    return MorBalances(Currencies=[MorCurrencyBalance.of(c) for c in found])
