"""The card provider's real-time authorization request: the network asks, the platform answers
within the network's budget (the decision reads and writes one card's rows, nothing else)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from finplat.cards.errors import CardNotFound
from finplat.cards.transactions import decision
from finplat.cards.transactions.schemas import MID_PATTERN
from finplat.config import Settings
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import NotFound, ServiceUnavailable, ValidationFailed, error_responses
from finplat.http.indexed_router import IndexedRouter
from finplat.kit.fields import SafeText
from finplat.kit.schemas import MAX_ID
from finplat.providers import inbound
from finplat.providers.names import BankProvider

router = IndexedRouter(tags=["Provider callbacks"])
_Id = Annotated[SafeText, Field(min_length=1, max_length=64)]


class AuthorizationsNotConfigured(ServiceUnavailable):
    code = "PROVIDER_CALLBACKS_NOT_CONFIGURED"
    message = "Provider callbacks are not configured: set FINPLAT_PROVIDER_CALLBACK_SECRET."


class UnknownCardProvider(NotFound):
    code = "PROVIDER_NOT_FOUND"
    message = "Not a card provider."


class _Request(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    companyId: Annotated[int, Field(ge=1, le=MAX_ID)]
    authorizationId: _Id
    cardId: _Id
    amountMinor: Annotated[int, Field(ge=1, le=10**15)]
    currency: Annotated[str, Field(min_length=3, max_length=8)]
    merchant: Annotated[SafeText, Field(min_length=1, max_length=100)]
    mcc: Annotated[str, Field(pattern=r"^[0-9]{4}$")] | None = None
    country: Annotated[str, Field(pattern=r"^[A-Z]{2}$")] | None = None
    partialApproval: bool = False
    mid: Annotated[str, Field(pattern=MID_PATTERN)] | None = None


class AuthorizationAnswer(BaseModel):
    AuthorizationId: str
    Approved: bool
    ApprovedAmountMinor: int
    ResponseCode: str
    DeclineReason: str | None
    RulesFired: list[dict[str, Any]]


@router.post(
    "/providers/{provider}/authorizations",
    response_model=AuthorizationAnswer,
    summary="Answer a card provider's real-time authorization request",
    description="For card providers, not partners. Signed as callbacks are "
    "(`X-Provider-Timestamp`, `X-Provider-Signature`). Body: `{companyId, authorizationId, "
    "cardId (the provider's), amountMinor, currency, merchant, mcc?, country?, "
    "partialApproval?, mid?}` (`mid`: the acquirer's merchant id, which loyalty matches). "
    "The platform decides from the card's available balance, its state "
    "and the company's authorization rules, and holds the approved amount at once; a repeat "
    "for one `authorizationId` answers the first decision. The provider then reports the "
    "purchase's events as `card.transaction` callbacks. The decline fee and the card's auto "
    "top-ups (failed transaction, low balance) follow in the background, within seconds.",
    responses=error_responses(400, 401, 404, 503),
    openapi_extra={
        "parameters": inbound.SIGNED_HEADERS_OPENAPI,
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
    },
)
async def provider_authorization_request(
    provider: str,
    request: Request,
) -> AuthorizationAnswer:
    settings: Settings = request.app.state.settings
    signature, timestamp = inbound.signed_headers(request.headers)
    if not settings.provider_callback_secret:
        raise AuthorizationsNotConfigured()
    if provider not in {p.value for p in BankProvider}:
        raise UnknownCardProvider()
    body = await request.body()
    inbound.verify(
        settings.provider_callback_secret,
        body,
        signature=signature,
        timestamp=timestamp,
        tolerance=timedelta(seconds=settings.provider_callback_tolerance_seconds),
    )
    try:
        asked = _Request.model_validate_json(body)
    except ValidationError as exc:
        raise ValidationFailed(
            validation_errors={
                ".".join(str(p) for p in e["loc"]) or "body": [e["msg"]]
                for e in exc.errors(include_url=False)
            }
        ) from None
    async with unit_of_work(request.app.state.session_factory) as session:
        # A company that does not exist holds no card: the card's read answers for both.
        bind_company(session, asked.companyId)
        found = await decision.card_to_decide(
            session, company_id=asked.companyId, provider=provider, card_ref=asked.cardId
        )
        if found is None:
            raise CardNotFound()
        card, configured = found
        decided = await decision.decide(
            session,
            company_id=asked.companyId,
            card=card,
            configured=configured,
            allow_loopback=bool(settings.allow_loopback_webhooks),
            follow_up_later=True,
            request=decision.AuthorizationRequest(
                authorization_id=asked.authorizationId,
                amount_minor=asked.amountMinor,
                currency=asked.currency,
                merchant=asked.merchant,
                mcc=asked.mcc,
                country=asked.country,
                partial_allowed=asked.partialApproval,
                mid=asked.mid,
            ),
        )
        return AuthorizationAnswer(
            AuthorizationId=asked.authorizationId,
            Approved=decided.approved,
            ApprovedAmountMinor=decided.approved_minor,
            ResponseCode=decided.response_code,
            DeclineReason=decided.decline_reason,
            RulesFired=decided.rules_fired,
        )
