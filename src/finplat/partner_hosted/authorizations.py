"""The partner decides a partner-hosted company's purchases: finplat asks its
`POST {BaseUrl}/authorizations` and waits at most `TimeoutMs`.

Body sent: `{CardTransactionId, AuthorizationId, ExternalUserId, CardId, Amount, Currency,
Merchant, Mcc, Country, PartialApproval}`; answer `{Approved, ApprovedAmount?,
DeclineReason?}` (`ApprovedAmount` defaults to the amount; less is a partial approval, taken
only when the merchant accepts one). No usable answer in time (late, 5xx, unreachable, not
the answer's shape) applies `FallbackDecision`:

* `DECLINE`: declined `PARTNER_UNAVAILABLE` (ISO 8583 `91`), and a reversal of the whole
  amount is queued for the partner at once, so an approval the partner gives after the
  deadline is undone (the network's timeout reversal);
* `APPROVE`: approved in stand-in, and an adjustment (`Reason: STAND_IN_APPROVAL`) tells the
  partner to hold the amount for the purchase (set, not added, so a late approval of its own
  holds it once).

An approval finplat does not take (more than asked, or partial for a merchant that does not
accept it) is declined `PARTNER_DECLINED` and reversed at the partner too.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies import repository as companies
from finplat.kit.money import from_minor, to_minor
from finplat.partner_hosted import client, repository
from finplat.partner_hosted.configuration import FallbackDecision

PARTNER_DECLINED = "PARTNER_DECLINED"
PARTNER_UNAVAILABLE = "PARTNER_UNAVAILABLE"
# The partner's reasons finplat keeps as they are; any other is `PARTNER_DECLINED`.
KNOWN_REASONS = {"INSUFFICIENT_FUNDS", "CARD_FROZEN", "RULE_DECLINED", "SUSPECTED_FRAUD"}


@dataclass(frozen=True)
class Hosting:
    """A partner-hosted company's partner, as one decision needs it."""

    partner: client.Partner
    timeout_ms: int
    fallback: FallbackDecision


@dataclass(frozen=True)
class Purchase:
    card_transaction_id: int
    authorization_id: str
    external_user_id: str
    card_id: int
    amount_minor: int
    currency: str
    merchant: str
    mcc: str | None
    country: str | None
    partial_allowed: bool


@dataclass(frozen=True)
class PartnerDecision:
    approved_minor: int  # 0: declined
    decline_reason: str | None
    stand_in: bool  # no usable answer in time: the fallback decided
    not_taken: bool = False  # the partner approved what finplat could not take


async def hosting_of(
    session: AsyncSession, *, company_id: int, allow_loopback: bool
) -> Hosting | None:
    """The company's partner, when its balances are partner-hosted."""
    config = await repository.config_of(session, company_id)
    if config is None:
        return None
    company = await companies.get(session, company_id)
    if company is None:
        return None
    return Hosting(
        partner=client.Partner(
            base_url=config.base_url,
            api_key=config.api_key,
            signing_secret=company.webhook_secret,
            allow_loopback=allow_loopback,
        ),
        timeout_ms=config.timeout_ms,
        fallback=FallbackDecision(config.fallback_decision),
    )


def purchase_body(purchase: Purchase) -> dict[str, object]:
    return {
        "CardTransactionId": purchase.card_transaction_id,
        "AuthorizationId": purchase.authorization_id,
        "ExternalUserId": purchase.external_user_id,
        "CardId": purchase.card_id,
        "Amount": from_minor(purchase.amount_minor, purchase.currency),
        "Currency": purchase.currency,
        "Merchant": purchase.merchant,
        "Mcc": purchase.mcc,
        "Country": purchase.country,
        "PartialApproval": purchase.partial_allowed,
    }


async def ask(hosting: Hosting, purchase: Purchase) -> PartnerDecision:
    """The partner's decision, or the fallback's when it has none in time."""
    reply = await client.call(
        hosting.partner,
        "POST",
        "/authorizations",
        body=client.render(purchase_body(purchase)),
        timeout_seconds=hosting.timeout_ms / 1000,
    )
    answer = client.json_object(reply)
    approved = None if answer is None else answer.get("Approved")
    if not isinstance(approved, bool) or answer is None:
        return _fallback(hosting, purchase)
    if not approved:
        reason = answer.get("DeclineReason")
        return PartnerDecision(
            0, reason if reason in KNOWN_REASONS else PARTNER_DECLINED, stand_in=False
        )
    approved_minor = _approved_minor(answer.get("ApprovedAmount"), purchase)
    if approved_minor is None:
        return PartnerDecision(0, PARTNER_DECLINED, stand_in=False, not_taken=True)
    return PartnerDecision(approved_minor, None, stand_in=False)


def _approved_minor(value: object, purchase: Purchase) -> int | None:
    if value is None:
        return purchase.amount_minor
    amount = client.decimal_of(value)
    if amount is None or amount <= Decimal(0):
        return None
    try:
        minor = to_minor(amount, purchase.currency)
    except ValueError:
        return None
    if minor > purchase.amount_minor:
        return None
    if minor < purchase.amount_minor and not purchase.partial_allowed:
        return None
    return minor


def _fallback(hosting: Hosting, purchase: Purchase) -> PartnerDecision:
    if hosting.fallback is FallbackDecision.APPROVE:
        return PartnerDecision(purchase.amount_minor, None, stand_in=True)
    return PartnerDecision(0, PARTNER_UNAVAILABLE, stand_in=True)
