"""The notifications a partner-hosted purchase sends the partner after its decision, each
queued in the partner outbox once per purchase event:

* `POST /reversals` `{..., Amount, Reason}`: the network's reversal (`Reason: NETWORK`), the
  purchase declined after the partner approved it (`DECLINED`: the card provider declined it,
  or never took it), an approval finplat could not take (`NOT_TAKEN`), and the timeout
  reversal of a fallback decline (`TIMEOUT`);
* `POST /clearings` `{..., Amount}`: the merchant's clearing (what the partner posts; the rest
  of its hold is released);
* `POST /refunds` `{..., Amount}`: a refund to the card (the partner credits it);
* `POST /adjustments` `{..., Amount, Reason}`: a change of the held amount that is neither:
  an incremental authorization (`INCREMENTAL`, held on top) and a stand-in approval
  (`STAND_IN_APPROVAL`, the amount the purchase holds).

Every body also carries `IdempotencyId` (the delivery's id), `CardTransactionId`,
`AuthorizationId`, `ExternalUserId`, `CardId`, `Currency` and `Merchant`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kit.money import from_minor
from finplat.partner_hosted import outbox
from finplat.partner_hosted.outbox import Operation


@dataclass(frozen=True)
class PurchaseRef:
    company_id: int
    card_transaction_id: int
    authorization_id: str
    external_user_id: str
    card_id: int
    currency: str
    merchant: str | None


async def notify(
    session: AsyncSession,
    purchase: PurchaseRef,
    *,
    operation: Operation,
    amount_minor: int,
    source: str,
    reason: str | None = None,
) -> None:
    """Queue one notification; `source` names the purchase event it reports (once each)."""
    payload: dict[str, object] = {
        "CardTransactionId": purchase.card_transaction_id,
        "AuthorizationId": purchase.authorization_id,
        "ExternalUserId": purchase.external_user_id,
        "CardId": purchase.card_id,
        "Amount": from_minor(amount_minor, purchase.currency),
        "Currency": purchase.currency,
        "Merchant": purchase.merchant,
    }
    if reason is not None:
        payload["Reason"] = reason
    await outbox.enqueue(
        session,
        company_id=purchase.company_id,
        operation=operation,
        source=f"{purchase.card_transaction_id}:{source}",
        payload=payload,
    )
