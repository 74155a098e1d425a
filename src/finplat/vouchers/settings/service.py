"""Voucher settings: the platform operator's, each company's, and what is in effect.

Rules:
* Vouchers work for a company only when enabled at all three levels: globally (the platform
  operator), for the company, and by the card provider for the company (`InterlaceEnabled`):
  `EffectiveEnabled` is the three together. While the sandbox is on, each starts enabled.
* A setting a company has not set is the platform's; one the platform has not set is the
  built-in default.
* `ShutdownMode` in effect is the stricter of the platform's and the company's: `NONE`,
  `STOP_NEW` (no redemption starts; started ones may still be verified) or `STOP_ALL` (nor may
  started ones: they fail on verification and their reservations are released). Every start
  and verification reads the settings in its own transaction, so a shutdown holds at once.
* Only an operator changes the platform's settings, a company's card-provider switch and a
  company's limits (`Maximum*`); a company key changes its own company's other settings.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.events import service as events
from finplat.vouchers.settings import repository
from finplat.vouchers.settings.models import (
    VoucherCompanySettings,
    VoucherGlobalSettings,
    VoucherSettingsColumns,
)
from finplat.vouchers.settings.repository import CompanySettingsRepository


class ShutdownMode(StrEnum):
    NONE = "NONE"  # redemptions run
    STOP_NEW = "STOP_NEW"  # no new redemption starts; started ones may complete
    STOP_ALL = "STOP_ALL"  # nor may started ones complete


_SEVERITY = {ShutdownMode.NONE: 0, ShutdownMode.STOP_NEW: 1, ShutdownMode.STOP_ALL: 2}
_IN_EFFECT = "finplat.vouchers.settings"  # session.info: EffectiveSettings by (sandbox, company)


@dataclass(frozen=True)
class SettingValues:
    """The settings every level may hold (the request's fields, `Enabled` aside)."""

    shutdown_mode: ShutdownMode
    low_balance_warning_percentage: int
    verification_ttl_minutes: int
    default_requires_approval: bool
    daily_report_recipients: list[str]
    maximum_batch_size: int
    maximum_import_rows: int
    maximum_mass_assignment_size: int


DEFAULTS = SettingValues(
    shutdown_mode=ShutdownMode.NONE,
    low_balance_warning_percentage=20,
    verification_ttl_minutes=10,
    default_requires_approval=False,
    daily_report_recipients=[],
    maximum_batch_size=1000,
    maximum_import_rows=10000,
    maximum_mass_assignment_size=10000,
)
# Fields only a platform operator may set on a company.
OPERATOR_ONLY_COMPANY_FIELDS = frozenset(
    {
        "card_provider_enabled",
        "maximum_batch_size",
        "maximum_import_rows",
        "maximum_mass_assignment_size",
    }
)
SETTABLE = frozenset(f.name for f in fields(SettingValues)) | {"enabled"}


@dataclass(frozen=True)
class EffectiveSettings:
    company_id: int | None
    company_name: str | None
    global_enabled: bool
    company_enabled: bool
    card_provider_enabled: bool
    values: SettingValues

    @property
    def effective_enabled(self) -> bool:
        return self.global_enabled and self.company_enabled and self.card_provider_enabled


def _layer(base: SettingValues, row: VoucherSettingsColumns | None) -> SettingValues:
    if row is None:
        return base
    merged: dict[str, Any] = {}
    for f in fields(SettingValues):
        own = getattr(row, f.name)
        merged[f.name] = getattr(base, f.name) if own is None else own
    merged["shutdown_mode"] = ShutdownMode(merged["shutdown_mode"])
    return SettingValues(**merged)


def _stricter(a: ShutdownMode, b: ShutdownMode) -> ShutdownMode:
    return a if _SEVERITY[a] >= _SEVERITY[b] else b


def _effective(
    *,
    sandbox: bool,
    platform: VoucherGlobalSettings | None,
    company_id: int | None,
    company_name: str | None,
    own: VoucherCompanySettings | None,
) -> EffectiveSettings:
    platform_values = _layer(DEFAULTS, platform)
    values = _layer(platform_values, own)
    # The company cannot loosen the platform's shutdown, only tighten it.
    mode = _stricter(platform_values.shutdown_mode, values.shutdown_mode)
    values = SettingValues(**{**values.__dict__, "shutdown_mode": mode})

    def flag(row: Any, name: str) -> bool:
        value = getattr(row, name) if row is not None else None
        return sandbox if value is None else bool(value)

    return EffectiveSettings(
        company_id=company_id,
        company_name=company_name,
        global_enabled=flag(platform, "enabled"),
        company_enabled=flag(own, "enabled"),
        card_provider_enabled=flag(own, "card_provider_enabled"),
        values=values,
    )


async def for_company(
    session: AsyncSession, *, sandbox: bool, company_id: int | None
) -> EffectiveSettings:
    """The settings in effect for `company_id`; with None, for a company that has set
    nothing of its own (the platform's view). Read once per session (a redemption's checks
    and its funding alert ask twice) until the session changes them."""
    kept: dict[tuple[bool, int | None], EffectiveSettings] = session.info.setdefault(_IN_EFFECT, {})
    if (sandbox, company_id) not in kept:
        kept[(sandbox, company_id)] = await _for_company(
            session, sandbox=sandbox, company_id=company_id
        )
    return kept[(sandbox, company_id)]


async def _for_company(
    session: AsyncSession, *, sandbox: bool, company_id: int | None
) -> EffectiveSettings:
    platform = await repository.global_row(session)
    if company_id is None:
        return _effective(
            sandbox=sandbox, platform=platform, company_id=None, company_name=None, own=None
        )
    ((company, own),) = await repository.companies_with_settings(session, company_id=company_id)
    return _effective(
        sandbox=sandbox,
        platform=platform,
        company_id=company.id,
        company_name=company.name,
        own=own,
    )


async def values_for(session: AsyncSession, *, company_id: int) -> SettingValues:
    """The settings in effect for the company, without its switches (which alone depend on
    the sandbox: any reading of the session's will do)."""
    kept: dict[tuple[bool, int | None], EffectiveSettings] = session.info.get(_IN_EFFECT, {})
    for sandbox in (True, False):
        if (sandbox, company_id) in kept:
            return kept[(sandbox, company_id)].values
    return (await for_company(session, sandbox=False, company_id=company_id)).values


async def company_statuses(
    session: AsyncSession, *, sandbox: bool, company_id: int | None
) -> list[EffectiveSettings]:
    """Each company's settings in effect (one company's when `company_id` is given)."""
    platform = await repository.global_row(session)
    return [
        _effective(
            sandbox=sandbox, platform=platform, company_id=c.id, company_name=c.name, own=own
        )
        for c, own in await repository.companies_with_settings(session, company_id=company_id)
    ]


def _apply(row: VoucherSettingsColumns, changes: dict[str, Any]) -> None:
    for name, value in changes.items():
        setattr(row, name, value.value if isinstance(value, StrEnum) else value)


async def change_global(
    session: AsyncSession, *, sandbox: bool, changes: dict[str, Any]
) -> EffectiveSettings:
    """Set the platform's settings (operator only: the caller checks). A field sent null goes
    back to its default."""
    assert set(changes) <= SETTABLE
    row = await repository.locked_global_row(session)
    session.info.pop(_IN_EFFECT, None)
    _apply(row, changes)
    await session.flush()
    return await for_company(session, sandbox=sandbox, company_id=None)


async def change_company(
    session: AsyncSession, *, sandbox: bool, company_id: int, changes: dict[str, Any]
) -> EffectiveSettings:
    """Set a company's own settings (a field sent null follows the platform again) and record
    `voucher.settings.updated` with what is in effect after."""
    assert set(changes) <= SETTABLE | OPERATOR_ONLY_COMPANY_FIELDS
    row = await CompanySettingsRepository(session, company_id).locked_own()
    session.info.pop(_IN_EFFECT, None)
    _apply(row, changes)
    await session.flush()
    effective = await for_company(session, sandbox=sandbox, company_id=company_id)
    await events.record(
        session,
        company_id=company_id,
        type_="voucher.settings.updated",
        domain="voucher",
        data={
            "companyId": company_id,
            "effectiveEnabled": effective.effective_enabled,
            "companyEnabled": effective.company_enabled,
            "cardProviderEnabled": effective.card_provider_enabled,
            "shutdownMode": effective.values.shutdown_mode.value,
            "changed": sorted(changes),
        },
    )
    return effective
