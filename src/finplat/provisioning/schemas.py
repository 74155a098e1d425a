from __future__ import annotations

from datetime import datetime

from pydantic import Field

from finplat.kit.schemas import ResponseModel
from finplat.providers.names import BankProvider, ProviderType


class ProviderStatus(ResponseModel):
    Provider: BankProvider
    ProviderType: ProviderType
    Status: str = Field(
        description="The provider's own approval state. Banking provider: NOT_STARTED, "
        "PENDING, pending_documents, rejected, approved. Card provider: NOT_STARTED, PENDING, "
        "APPROVED, REJECTED. Switch provider: NOT_STARTED, PENDING, ELIGIBLE (link created "
        "with the first card), APPROVED, REJECTED."
    )
    HasAccount: bool
    AccountId: str | None
    UpdatedAt: datetime | None


class BankingProvidersResponse(ResponseModel):
    UserId: int
    Providers: list[ProviderStatus]


class ProviderAccountResponse(ResponseModel):
    UserId: int
    Provider: BankProvider
    ProviderType: ProviderType
    Status: str
    AccountId: str | None
    Created: bool = Field(description="False when the account already existed.")
