"""The crypto rail's `conversion.updated` callback: read strictly, then settled once."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.exchange import service
from finplat.kit.fields import SafeText
from finplat.providers import inbound
from finplat.providers.crypto.port import Conversion, ConversionStatus
from finplat.providers.names import ExternalProvider


class ConversionUpdated(BaseModel):
    """The `data` of `conversion.updated` (strict JSON types; added fields are ignored)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    conversionId: Annotated[SafeText, Field(max_length=64)]
    idempotencyKey: Annotated[SafeText, Field(max_length=128)]
    status: Annotated[ConversionStatus, Field(strict=False)]
    reason: Annotated[str, Field(max_length=200)] | None = None


@inbound.handler(ExternalProvider.CRYPTO.value, "conversion.updated")
async def on_conversion_updated(
    session: AsyncSession, company_id: int, data: dict[str, Any]
) -> None:
    update = ConversionUpdated.model_validate(data)
    await service.settle_by_key(
        session,
        company_id=company_id,
        provider=ExternalProvider.CRYPTO.value,
        key=update.idempotencyKey,
        conversion=Conversion(update.conversionId, update.status, update.reason),
    )
