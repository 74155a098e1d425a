"""The crypto rail's `card_transfer.updated` callback (deliveries to the card provider and
crypto card loads): read strictly, then settled once by the flow that holds the key."""

from __future__ import annotations

from typing import Annotated, Any

import structlog
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.cardloads import service as cardloads
from finplat.crypto.cardprov import service as cardprov
from finplat.kit.fields import SafeText
from finplat.providers import inbound
from finplat.providers.crypto.card_rails import RailTransfer, RailTransferKind, RailTransferStatus
from finplat.providers.names import ExternalProvider

log = structlog.get_logger("finplat.crypto.cardloads.callbacks")


class CardTransferUpdated(BaseModel):
    """The `data` of `card_transfer.updated` (strict JSON types; added fields are ignored)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    reference: Annotated[SafeText, Field(max_length=64)]
    idempotencyKey: Annotated[SafeText, Field(max_length=128)]
    kind: Annotated[RailTransferKind, Field(strict=False)]
    status: Annotated[RailTransferStatus, Field(strict=False)]
    reason: Annotated[str, Field(max_length=200)] | None = None


@inbound.handler(ExternalProvider.CRYPTO.value, "card_transfer.updated")
async def on_card_transfer_updated(
    session: AsyncSession, company_id: int, data: dict[str, Any]
) -> None:
    update = CardTransferUpdated.model_validate(data)
    answer = RailTransfer(update.reference, update.kind, update.status, update.reason)
    flow = cardloads if update.kind is RailTransferKind.CARD_LOAD else cardprov
    if not await flow.settle_by_key(
        session, company_id=company_id, key=update.idempotencyKey, answer=answer
    ):
        log.warning("crypto_card_transfer_for_unknown_key", reference=update.reference)
