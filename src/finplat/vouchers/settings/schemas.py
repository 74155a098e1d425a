from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field

from finplat.kit.fields import EmailAddress, json_integer
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.vouchers.settings.service import EffectiveSettings
from finplat.vouchers.settings.service import ShutdownMode as Shutdown

# The wire name of each setting, and the column it sets.
WIRE_TO_SETTING = {
    "Enabled": "enabled",
    "ShutdownMode": "shutdown_mode",
    "LowBalanceWarningPercentage": "low_balance_warning_percentage",
    "VerificationTtlMinutes": "verification_ttl_minutes",
    "DefaultRequiresApproval": "default_requires_approval",
    "DailyReportRecipients": "daily_report_recipients",
    "MaximumBatchSize": "maximum_batch_size",
    "MaximumImportRows": "maximum_import_rows",
    "MaximumMassAssignmentSize": "maximum_mass_assignment_size",
    "InterlaceEnabled": "card_provider_enabled",
}
NULL_MEANS = (
    " Omitted: unchanged. `null`: no longer set at this level (a company follows the platform "
    "again; the platform goes back to its default)."
)


def _whole(low: int, high: int, description: str) -> Any:
    return Annotated[
        int,
        Field(ge=low, le=high, description=description + NULL_MEANS),
        BeforeValidator(json_integer),
    ]


class VoucherSettingsRequest(RequestModel):
    """All optional; only the fields sent change."""

    model_config = ConfigDict(
        json_schema_extra={"example": {"Enabled": True, "ShutdownMode": "NONE"}}
    )

    Enabled: bool | None = Field(
        default=None, description="Vouchers on at this level." + NULL_MEANS
    )
    ShutdownMode: Annotated[Shutdown, Field(strict=False)] | None = Field(
        default=None,
        description="`NONE`; `STOP_NEW`: no redemption may start; `STOP_ALL`: nor may a started "
        "one be verified (it fails, its reservation released). The stricter of the platform's "
        "and the company's is in effect." + NULL_MEANS,
    )
    LowBalanceWarningPercentage: (
        _whole(  # type: ignore[valid-type]
            0,
            100,
            "When a group's funding account falls below this percentage of what its vouchers may "
            "still redeem, `voucher.funding.low` is sent (default 20).",
        )
        | None
    ) = None
    VerificationTtlMinutes: (
        _whole(  # type: ignore[valid-type]
            1, 1440, "How long a redemption's one-time code is valid, in minutes (default 10)."
        )
        | None
    ) = None
    DefaultRequiresApproval: bool | None = Field(
        default=None,
        description="Whether new groups' vouchers wait for the company's approval when the "
        "group does not say (default false)." + NULL_MEANS,
    )
    DailyReportRecipients: (
        Annotated[list[EmailAddress], Field(max_length=20, description="At most 20.")] | None
    ) = None
    MaximumBatchSize: (
        _whole(  # type: ignore[valid-type]
            1, 10000, "Most vouchers issued in one request (default 1000)."
        )
        | None
    ) = None
    MaximumImportRows: (
        _whole(  # type: ignore[valid-type]
            1, 1000000, "Most rows of one import (default 10000)."
        )
        | None
    ) = None
    MaximumMassAssignmentSize: (
        _whole(  # type: ignore[valid-type]
            1, 1000000, "Most users in one mass assignment (default 10000)."
        )
        | None
    ) = None

    def changes(self) -> dict[str, Any]:
        """The sent fields, by setting name."""
        return {WIRE_TO_SETTING[name]: getattr(self, name) for name in self.model_fields_set}


class CompanyVoucherSettingsRequest(VoucherSettingsRequest):
    """A company's own settings. `Enabled` is the company's switch. Only an operator may send
    `InterlaceEnabled` and the `Maximum*` limits (403 `OPERATOR_KEY_REQUIRED` for a company
    key)."""

    InterlaceEnabled: bool | None = Field(
        default=None,
        description="The card provider's switch for this company (operator only)." + NULL_MEANS,
    )


class VoucherSettingsResponse(ResponseModel):
    GlobalEnabled: bool = Field(description="The platform operator's switch.")
    CompanyEnabled: bool = Field(description="The company's switch.")
    InterlaceEnabled: bool = Field(description="The card provider's switch for the company.")
    EffectiveEnabled: bool = Field(description="All three on: vouchers work for the company.")
    ShutdownMode: Shutdown
    LowBalanceWarningPercentage: int
    VerificationTtlMinutes: int
    DefaultRequiresApproval: bool
    DailyReportRecipients: list[str]
    MaximumBatchSize: int
    MaximumImportRows: int
    MaximumMassAssignmentSize: int

    @classmethod
    def fields_of(cls, settings: EffectiveSettings) -> dict[str, Any]:
        v = settings.values
        return {
            "GlobalEnabled": settings.global_enabled,
            "CompanyEnabled": settings.company_enabled,
            "InterlaceEnabled": settings.card_provider_enabled,
            "EffectiveEnabled": settings.effective_enabled,
            "ShutdownMode": v.shutdown_mode,
            "LowBalanceWarningPercentage": v.low_balance_warning_percentage,
            "VerificationTtlMinutes": v.verification_ttl_minutes,
            "DefaultRequiresApproval": v.default_requires_approval,
            "DailyReportRecipients": list(v.daily_report_recipients),
            "MaximumBatchSize": v.maximum_batch_size,
            "MaximumImportRows": v.maximum_import_rows,
            "MaximumMassAssignmentSize": v.maximum_mass_assignment_size,
        }

    @classmethod
    def of(cls, settings: EffectiveSettings) -> VoucherSettingsResponse:
        return cls(**cls.fields_of(settings))


class _Company(ResponseModel):
    CompanyId: int
    CompanyName: str


class CompanyVoucherStatus(VoucherSettingsResponse, _Company):
    """A company's settings in effect, its id and name first."""

    @classmethod
    def of(cls, settings: EffectiveSettings) -> CompanyVoucherStatus:
        assert settings.company_id is not None
        assert settings.company_name is not None
        return cls(
            CompanyId=settings.company_id,
            CompanyName=settings.company_name,
            **cls.fields_of(settings),
        )
