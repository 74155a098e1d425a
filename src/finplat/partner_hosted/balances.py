"""A partner-hosted user's balance, read from the partner
(`GET {BaseUrl}/balances/{ExternalUserId}`, answered `{Balances: [{Currency, Available,
Ledger?}]}`): the partner keeps the money, so finplat shows what the partner says, within the
company's `TimeoutMs`, and never caches it."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import quote

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import Conflict, ServiceUnavailable
from finplat.partner_hosted import authorizations, client


class PartnerHostedNotConfigured(Conflict):
    code = "PARTNER_HOSTED_NOT_CONFIGURED"
    message = (
        "The company's balances are kept by finplat, not a partner (set PartnerHosted in "
        "PUT /api/v2/company/configuration)."
    )


class PartnerUnavailable(ServiceUnavailable):
    code = "PARTNER_UNAVAILABLE"
    message = "The partner did not answer the balance read in time or with a usable answer."


@dataclass(frozen=True)
class PartnerBalance:
    currency: str
    available: Decimal
    ledger: Decimal | None


async def read(
    session: AsyncSession, *, company_id: int, external_user_id: str, allow_loopback: bool
) -> list[PartnerBalance]:
    hosting = await authorizations.hosting_of(
        session, company_id=company_id, allow_loopback=allow_loopback
    )
    if hosting is None:
        raise PartnerHostedNotConfigured()
    reply = await client.call(
        hosting.partner,
        "GET",
        f"/balances/{quote(external_user_id, safe='')}",
        timeout_seconds=hosting.timeout_ms / 1000,
    )
    answer = client.json_object(reply)
    listed = None if answer is None else answer.get("Balances")
    if not isinstance(listed, list):
        raise PartnerUnavailable()
    balances = []
    for item in listed:
        if not isinstance(item, dict):
            raise PartnerUnavailable()
        currency = item.get("Currency")
        available = client.decimal_of(item.get("Available"))
        ledger = item.get("Ledger")
        ledger_amount = None if ledger is None else client.decimal_of(ledger)
        if not isinstance(currency, str) or not 3 <= len(currency) <= 8 or available is None:
            raise PartnerUnavailable()
        if ledger is not None and ledger_amount is None:
            raise PartnerUnavailable()
        balances.append(PartnerBalance(currency.upper(), available, ledger_amount))
    return balances
