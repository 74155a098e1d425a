"""Sandbox chain simulations: a transfer to a pay-in address, blocks on top of it, and a
reorganisation that drops it."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from fastapi import Request, status
from pydantic import AfterValidator, ConfigDict, Field, StrictInt

from finplat.config import Settings
from finplat.crypto.deposits import service as deposits
from finplat.crypto.deposits.schemas import DepositIdPath, DepositResponse
from finplat.crypto.exchange.schemas import CryptoTransferResponse, TransferIdPath
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.money import AmountRange, DecimalAmount
from finplat.kit.schemas import RequestModel, UserIdQuery
from finplat.sandbox.crypto import chain, conversions

router = api_router(tags=["Sandbox"])

MAX_TRANSFER = Decimal(10**12)
MAX_BLOCKS = 100_000
TOKEN_DECIMALS = 18


def _token_decimals(amount: Decimal) -> Decimal:
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -TOKEN_DECIMALS:
        raise ValueError(f"At most {TOKEN_DECIMALS} decimals (the most any token has).")
    return amount


class ChainTransfer(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {"Address": "0x...", "Currency": "USDC", "ChainId": 1, "Amount": 250.5},
            "allOf": [{"properties": {"Amount": {"multipleOf": 1e-18}}}],
        }
    )

    Address: Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[0-9A-Za-z]+$")] = Field(
        description="A pay-in address the service returned."
    )
    Currency: Annotated[str, Field(pattern=r"^[A-Za-z0-9.]{1,16}$")] = Field(
        description="The token sent: USDC or USDT, or any other token symbol (which the "
        "platform keeps as an unsupported deposit)."
    )
    ChainId: StrictInt = Field(
        ge=-(2**31),
        lt=2**31,
        description="The chain it is sent on: the address's own, or another (an EVM address "
        "exists on every EVM chain; a deposit on a chain it was not issued for is kept as "
        "unsupported).",
    )
    Amount: Annotated[
        DecimalAmount,
        AmountRange(greater_than=Decimal(0), at_most=MAX_TRANSFER),
        AfterValidator(_token_decimals),
    ] = Field(description="What arrives, in the token's units (up to 18 decimals).")
    Confirmations: StrictInt = Field(
        default=0, ge=0, le=MAX_BLOCKS, description="Blocks already on top of it."
    )


class Blocks(RequestModel):
    Blocks: StrictInt = Field(ge=1, le=MAX_BLOCKS, description="New blocks on top of it.")


class ConversionOutcome(RequestModel):
    Outcome: Literal["COMPLETED", "FAILED"]


def _secret(request: Request) -> str:
    settings: Settings = request.app.state.settings
    return settings.provider_callback_secret


@router.post(
    "/api/v2/sandbox/crypto/deposits",
    response_model=DepositResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Send a token to a pay-in address (sandbox)",
    description="The sandbox rail sees a transfer to one of its addresses and notifies the "
    "platform (`deposit.updated`), which records the deposit: `PENDING` with its "
    "confirmations, credited once the chain's finality threshold is reached, or "
    "`UNSUPPORTED` for a token or chain the address was not issued for. An address the rail "
    "did not issue is 404 `ADDRESS_NOT_FOUND`; a chain whose address format differs (a Tron "
    "address on an EVM chain) 409 `ADDRESS_NOT_ON_CHAIN`.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_sandbox_deposit(
    body: ChainTransfer,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> DepositResponse:
    deposit = await chain.send(
        session,
        providers,
        request.app.state.session_factory,
        secret=_secret(request),
        company_id=principal.company_id,
        address=body.Address,
        token=body.Currency,
        chain_id=body.ChainId,
        amount=body.Amount,
        confirmations=body.Confirmations,
    )
    return DepositResponse.of(deposit)


@router.post(
    "/api/v2/sandbox/crypto/deposits/{depositId}/confirmations",
    response_model=DepositResponse,
    summary="Build blocks on a deposit's transfer (sandbox)",
    description="`Blocks` more blocks on top of the transfer; at the chain's finality "
    "threshold the deposit is credited. A transfer already reorganised away gets none.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_sandbox_confirmations(
    depositId: DepositIdPath,
    userId: UserIdQuery,
    body: Blocks,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> DepositResponse:
    deposit = await deposits.deposit_of(
        session, company_id=principal.company_id, user_id=userId, deposit_id=depositId
    )
    updated = await chain.add_blocks(
        session,
        providers,
        request.app.state.session_factory,
        secret=_secret(request),
        company_id=principal.company_id,
        deposit=deposit,
        blocks=body.Blocks,
    )
    return DepositResponse.of(updated)


@router.post(
    "/api/v2/sandbox/crypto/deposits/{depositId}/reorg",
    response_model=DepositResponse,
    summary="Reorganise a deposit's transfer off the chain (sandbox)",
    description="The chain drops the transfer's block. Before finality the deposit becomes "
    "`REORGED` and is never credited; after it, the credit stands (the platform only credits "
    "final transfers) and the operators are alerted.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_sandbox_reorg(
    depositId: DepositIdPath,
    userId: UserIdQuery,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> DepositResponse:
    deposit = await deposits.deposit_of(
        session, company_id=principal.company_id, user_id=userId, deposit_id=depositId
    )
    updated = await chain.reorganise(
        session,
        providers,
        request.app.state.session_factory,
        secret=_secret(request),
        company_id=principal.company_id,
        deposit=deposit,
    )
    return DepositResponse.of(updated)


@router.post(
    "/api/v2/sandbox/crypto/bankprov-deposits/{transferId}/settle",
    response_model=CryptoTransferResponse,
    summary="Decide a crypto-to-fiat conversion (sandbox)",
    description="`COMPLETED`: the rail pays `FiatAmount` into the budget (an incoming payment "
    "at the banking provider, from `Crypto rail` with the `TransferId` as reference) and "
    "reports the conversion completed; the transfer is `COMPLETED`. `FAILED`: the rail "
    "reports it failed; the transfer is `FAILED` and the amount is back in the crypto "
    "balance. A settled transfer is 409 `TRANSFER_NOT_PENDING`.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_sandbox_settle_conversion(
    transferId: TransferIdPath,
    userId: UserIdQuery,
    body: ConversionOutcome,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CryptoTransferResponse:
    transfer = await conversions.settle(
        session,
        providers,
        request.app.state.session_factory,
        secret=_secret(request),
        company_id=principal.company_id,
        user_id=userId,
        transfer_id=transferId,
        completed=body.Outcome == "COMPLETED",
    )
    return CryptoTransferResponse.of(transfer)
