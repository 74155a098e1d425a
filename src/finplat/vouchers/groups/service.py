"""Voucher groups and issuing vouchers into them.

Rules:
* A group needs a `Name`; its `Default*` fields are what its vouchers get unless the issuing
  request overrides them. `DefaultRequiresApproval` defaults to the settings' value,
  `DefaultRequiresEmail2Fa` to true, `DefaultType` to `FIXED_AMOUNT` (the only type: the
  voucher credits its `Value` to the card it is redeemed on).
* A voucher has a value and a currency (from the request or the group; 400 without them), at
  most the currency's decimals; a validity window whose end is after its start; limits that
  are positive when set (unset: no limit); an aggregate cap in the voucher's currency.
* One request issues at most `MaximumBatchSize` vouchers (400 `BATCH_TOO_LARGE`).
* Each code comes from the secure random source; only its hash and masked form are stored,
  and the code itself is in the issuing response only.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.events import service as events
from finplat.kit.money import Money, UnknownCurrency, normalize_currency, requested_amount
from finplat.vouchers import codes
from finplat.vouchers.errors import BatchTooLarge, VoucherGroupNotFound, VoucherTermsInvalid
from finplat.vouchers.models import Voucher, VoucherGroup
from finplat.vouchers.repository import GroupRepository, VoucherRepository
from finplat.vouchers.status import VoucherStatus


class VoucherType(StrEnum):
    FIXED_AMOUNT = "FIXED_AMOUNT"  # credits `Value` to the card it is redeemed on


class GroupStatus(StrEnum):
    ACTIVE = "ACTIVE"


@dataclass(frozen=True)
class Terms:
    """What a voucher is issued with: the group's defaults, then the request's overrides.
    Amounts are as sent (`Decimal`); `currency` decides their minor units."""

    name: str | None = None
    description: str | None = None
    type: VoucherType = VoucherType.FIXED_AMOUNT
    value: Decimal | None = None
    currency: str | None = None
    per_user_limit: int | None = None
    total_use_limit: int | None = None
    aggregate_cap: Decimal | None = None
    requires_approval: bool | None = None
    requires_email_2fa: bool | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None


@dataclass(frozen=True)
class GroupDraft:
    name: str
    terms: Terms
    campaign_reference: str | None = None
    cost_centre: str | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Issued:
    voucher: Voucher
    plaintext_code: str  # shown in the issuing response only


def _currency(code: str | None, field: str) -> str | None:
    if code is None:
        return None
    try:
        return normalize_currency(code)
    except UnknownCurrency as exc:
        raise VoucherTermsInvalid(validation_errors={field: [str(exc)]}) from None


def _minor(amount: Decimal | None, currency: str | None, field: str) -> int | None:
    if amount is None:
        return None
    if currency is None:
        raise VoucherTermsInvalid(
            f"{field} needs a currency.", validation_errors={field: ["Needs a currency."]}
        )
    return requested_amount(amount, currency, field=field, error=VoucherTermsInvalid).minor


def _check_window(valid_from: datetime | None, valid_until: datetime | None, field: str) -> None:
    if valid_from is not None and valid_until is not None and valid_until <= valid_from:
        raise VoucherTermsInvalid(validation_errors={field: ["Must be after the start."]})


async def create_group(
    session: AsyncSession, *, company_id: int, draft: GroupDraft, default_requires_approval: bool
) -> VoucherGroup:
    """Create a group (records `voucher.group.created`)."""
    terms = draft.terms
    currency = _currency(terms.currency, "DefaultCurrency")
    _check_window(terms.valid_from, terms.valid_until, "DefaultValidUntil")
    group = VoucherGroup(
        id=str(uuid.uuid4()),
        name=draft.name,
        description=terms.description,
        status=GroupStatus.ACTIVE.value,
        default_type=terms.type.value,
        default_currency=currency,
        default_value_minor=_minor(terms.value, currency, "DefaultValue"),
        default_per_user_limit=terms.per_user_limit,
        default_total_use_limit=terms.total_use_limit,
        default_aggregate_cap_minor=_minor(terms.aggregate_cap, currency, "DefaultAggregateCap"),
        default_requires_approval=(
            default_requires_approval
            if terms.requires_approval is None
            else terms.requires_approval
        ),
        default_requires_email_2fa=(
            True if terms.requires_email_2fa is None else terms.requires_email_2fa
        ),
        default_valid_from=terms.valid_from,
        default_valid_until=terms.valid_until,
        campaign_reference=draft.campaign_reference,
        cost_centre=draft.cost_centre,
        tags=list(draft.tags),
    )
    await GroupRepository(session, company_id).add(group)
    await events.record(
        session,
        company_id=company_id,
        type_="voucher.group.created",
        domain="voucher",
        data={"groupId": group.id, "name": group.name, "status": group.status},
    )
    return group


async def get_group(session: AsyncSession, *, company_id: int, group_id: str) -> VoucherGroup:
    group = await GroupRepository(session, company_id).find(group_id)
    if group is None:
        raise VoucherGroupNotFound()
    return group


def _group_terms(group: VoucherGroup) -> Terms:
    currency = group.default_currency

    def amount(minor: int | None) -> Decimal | None:
        return Money(minor, currency).amount if minor is not None and currency else None

    return Terms(
        name=group.name,
        description=group.description,
        type=VoucherType(group.default_type),
        value=amount(group.default_value_minor),
        currency=currency,
        per_user_limit=group.default_per_user_limit,
        total_use_limit=group.default_total_use_limit,
        aggregate_cap=amount(group.default_aggregate_cap_minor),
        requires_approval=group.default_requires_approval,
        requires_email_2fa=group.default_requires_email_2fa,
        valid_from=group.default_valid_from,
        valid_until=group.default_valid_until,
    )


def _merged(group: VoucherGroup, overrides: Terms, sent: frozenset[str]) -> Terms:
    """The group's terms with the fields the request sent in their place."""
    base = _group_terms(group)
    if "currency" in sent and "value" not in sent and base.currency != overrides.currency:
        # The group's value is in the group's currency: another currency needs its own value.
        base = replace(base, value=None, aggregate_cap=None)
    return replace(base, **{name: getattr(overrides, name) for name in sent})


async def issue(
    session: AsyncSession,
    *,
    company_id: int,
    group_id: str,
    count: int,
    overrides: Terms,
    sent: frozenset[str],
    maximum_batch_size: int,
) -> list[Issued]:
    """Issue `count` vouchers into the group with the group's terms and the request's
    overrides (`sent`: the `Terms` fields the request gave); records `voucher.issued`."""
    group = await get_group(session, company_id=company_id, group_id=group_id)
    if count > maximum_batch_size:
        raise BatchTooLarge(
            f"At most {maximum_batch_size} vouchers per request.",
            validation_errors={"Count": [f"At most {maximum_batch_size}."]},
        )
    terms = _merged(group, overrides, sent)
    currency = _currency(terms.currency, "Currency")
    if terms.value is None or currency is None:
        raise VoucherTermsInvalid(
            "A voucher needs a Value and a Currency: send them, or give the group defaults.",
            validation_errors={"Value": ["Required (the group has no DefaultValue)."]},
        )
    value_minor = _minor(terms.value, currency, "Value")
    assert value_minor is not None
    if value_minor <= 0:
        raise VoucherTermsInvalid(validation_errors={"Value": ["Must be greater than 0."]})
    cap_minor = _minor(terms.aggregate_cap, currency, "MaximumAggregateValue")
    if cap_minor is not None and cap_minor < value_minor:
        raise VoucherTermsInvalid(
            validation_errors={"MaximumAggregateValue": ["Must be at least the Value."]}
        )
    _check_window(terms.valid_from, terms.valid_until, "ValidUntil")
    issued: list[Issued] = []
    for _ in range(count):
        code = codes.new_code()
        voucher = Voucher(
            id=str(uuid.uuid4()),
            group_id=group.id,
            name=terms.name or group.name,
            description=terms.description,
            code_hash=codes.code_hash(code),
            masked_code=codes.masked(code),
            type=terms.type.value,
            currency=currency,
            value_minor=value_minor,
            status=VoucherStatus.ACTIVE.value,
            per_user_limit=terms.per_user_limit,
            maximum_total_uses=terms.total_use_limit,
            maximum_aggregate_value_minor=cap_minor,
            successful_uses=0,
            reserved_uses=0,
            redeemed_value_minor=0,
            reserved_value_minor=0,
            requires_whitelabel_approval=bool(terms.requires_approval),
            requires_email_2fa=True
            if terms.requires_email_2fa is None
            else terms.requires_email_2fa,
            valid_from=terms.valid_from,
            valid_until=terms.valid_until,
        )
        issued.append(Issued(voucher, code))
    await VoucherRepository(session, company_id).add_all([i.voucher for i in issued])
    await events.record(
        session,
        company_id=company_id,
        type_="voucher.issued",
        domain="voucher",
        data={
            "groupId": group.id,
            "count": count,
            "voucherIds": [i.voucher.id for i in issued],
            "currency": currency,
            "value": Money(value_minor, currency).amount,
        },
    )
    return issued
