"""The banking provider's mandate and collection callbacks.

* `mandate.status_changed` `{mandateId, status, reason}`: the account holder authorised
  (`ACTIVE`) or refused (`FAILED`) a mandate, or it was cancelled at the provider.
* `collection.status_changed` `{collectionId, status, reason, idempotencyKey}`: a pending
  collection settled; found by the key it was created under (its creation answer may have
  been lost).

Read strictly before anything is written (anything else is 400 `MALFORMED_CALLBACK`).
"""

from __future__ import annotations

from typing import Annotated, Any

import structlog
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kit.fields import SafeText
from finplat.payments.collections import service as collections
from finplat.payments.mandates import service as mandates
from finplat.providers import inbound
from finplat.providers.banking.port import (
    COLLECTION_STATUS_CHANGED,
    MANDATE_STATUS_CHANGED,
    ProviderCollectionStatus,
    ProviderMandateStatus,
)
from finplat.providers.names import BankProvider, ExternalProvider
from finplat.transactions import service as transactions

log = structlog.get_logger("finplat.payments.mandates")
ProviderId = Annotated[SafeText, Field(max_length=64)]
Reason = Annotated[SafeText, Field(max_length=64)]


class MandateStatusChanged(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    mandateId: ProviderId
    status: Annotated[ProviderMandateStatus, Field(strict=False)]
    reason: Reason | None = None


class CollectionStatusChanged(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    collectionId: ProviderId
    status: Annotated[ProviderCollectionStatus, Field(strict=False)]
    reason: Reason | None = None
    idempotencyKey: Annotated[SafeText, Field(max_length=64)]


@inbound.handler(ExternalProvider.BANKPROV.value, MANDATE_STATUS_CHANGED)
async def on_mandate_status(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
    changed = MandateStatusChanged.model_validate(data)
    await mandates.apply_provider_status(
        session,
        company_id=company_id,
        provider_mandate_id=changed.mandateId,
        status=changed.status,
        reason=changed.reason,
    )


@inbound.handler(ExternalProvider.BANKPROV.value, COLLECTION_STATUS_CHANGED)
async def on_collection_status(
    session: AsyncSession, company_id: int, data: dict[str, Any]
) -> None:
    changed = CollectionStatusChanged.model_validate(data)
    tx = await transactions.by_provider_key(
        session,
        company_id=company_id,
        provider=BankProvider.BANKPROV.value,
        key=changed.idempotencyKey,
    )
    if tx is None:
        log.warning("status_for_unknown_collection")
        return
    await collections.settle(
        session,
        company_id=company_id,
        tx_id=tx.id,
        status=changed.status,
        reason=changed.reason,
        provider_collection_id=changed.collectionId,
    )
