"""Voucher redemptions: start with the code, verify with the one-time code, credit the card.

Rules:
* A redemption starts only while vouchers are in effect for the company (`EffectiveEnabled`,
  409 `VOUCHERS_DISABLED`) and not shut down (`ShutdownMode` not `NONE`: 409
  `VOUCHERS_SHUT_DOWN`); for the company's user and one of that user's cards (404 otherwise),
  in the voucher's currency (409 `VOUCHER_CURRENCY_MISMATCH`), within the voucher's validity
  window (409 `VOUCHER_NOT_YET_VALID` / `VOUCHER_EXPIRED`).
* Starting reserves one use and the voucher's value, and one of the user's uses, each by a
  conditional UPDATE that holds the limit (409 `VOUCHER_USE_LIMIT_REACHED`,
  `VOUCHER_VALUE_CAP_REACHED`, `VOUCHER_PER_USER_LIMIT_REACHED`): parallel starts can never
  take more than the limits allow. A reservation not verified within `VerificationTtlMinutes`
  expires and is released.
* With `RequiresEmail2Fa` a six-digit code from the secure random source is emailed to the
  user (only its hash is kept); the redemption waits `PENDING_VERIFICATION`. A wrong code is
  403 `INVALID_VERIFICATION_CODE`; the fifth fails the redemption (409 `REDEMPTION_LOCKED`); a
  late one expires it (409 `VERIFICATION_EXPIRED`). Without `RequiresEmail2Fa` the redemption
  goes on at once.
* Verified, a voucher that `RequiresWhitelabelApproval` waits `PENDING_APPROVAL` for the
  company; otherwise the reservation becomes a use and the card is credited the voucher's
  value from the company's voucher funding account, through the ledger and the card provider
  (a top-up of kind `VOUCHER`, without a fee). Not enough funding: 409
  `VOUCHER_FUNDING_INSUFFICIENT` and nothing changes. A card the provider refuses to credit
  fails the redemption (`ErrorCode` names why) and gives the use back. An unanswered
  provider leaves it `PROCESSING` until the card funding is settled.
* `ShutdownMode` `STOP_ALL` fails every redemption still waiting, when next touched.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.funding import service as card_funding
from finplat.cards.funding.service import FundingKind, FundingStatus
from finplat.cards.lookup import find_card
from finplat.db.tenancy import bind_company
from finplat.errors import ApiError
from finplat.events import service as events
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money
from finplat.ledger.service import CompanyAccount
from finplat.providers.calls import commit_then_call
from finplat.providers.errors import ProviderRejected
from finplat.providers.messaging.port import CodeMailer
from finplat.providers.registry import Providers, configured
from finplat.users import service as users
from finplat.vouchers import codes
from finplat.vouchers.errors import (
    InvalidVerificationCode,
    RedemptionLocked,
    RedemptionNotAwaitingApproval,
    RedemptionNotFound,
    VerificationExpired,
    VoucherCurrencyMismatch,
    VoucherExhausted,
    VoucherExpired,
    VoucherFundingShort,
    VoucherNotFound,
    VoucherNotYetValid,
    VoucherPerUserLimitReached,
    VouchersDisabled,
    VouchersShutDown,
    VoucherUseLimitReached,
    VoucherValueCapReached,
)
from finplat.vouchers.models import Voucher
from finplat.vouchers.redemptions import funding_alerts, repository
from finplat.vouchers.redemptions.models import HOLDING, RedemptionStatus, VoucherRedemption
from finplat.vouchers.redemptions.repository import RedemptionRepository, VoucherCounters
from finplat.vouchers.repository import VoucherRepository
from finplat.vouchers.settings import service as settings
from finplat.vouchers.settings.service import EffectiveSettings, ShutdownMode
from finplat.vouchers.status import VoucherStatus, reported

MAX_ATTEMPTS = 5
STARTED = "redemption_id"  # the recovery point (and its state key) of a started redemption
CODE_DIGITS = 6
FINAL = (
    RedemptionStatus.COMPLETED,
    RedemptionStatus.FAILED,
    RedemptionStatus.EXPIRED,
    RedemptionStatus.REJECTED,
)
# What a failed redemption's `ErrorCode` says, beyond the provider's own codes.
LOCKED = "VERIFICATION_LOCKED"
EXPIRED = "VERIFICATION_EXPIRED"
SHUT_DOWN = "VOUCHERS_SHUT_DOWN"
REJECTED = "REJECTED_BY_COMPANY"


@dataclass(frozen=True)
class Redemption:
    row: VoucherRedemption
    voucher: Voucher


def _code_hash(redemption_id: str, code: str) -> str:
    return hashlib.sha256(f"{redemption_id}:{code}".encode()).hexdigest()


def _new_code() -> str:
    return "".join(secrets.choice("0123456789") for _ in range(CODE_DIGITS))


def _check_open(effective: EffectiveSettings) -> None:
    if not effective.effective_enabled:
        raise VouchersDisabled()
    if effective.values.shutdown_mode != ShutdownMode.NONE:
        raise VouchersShutDown()


async def _voucher(session: AsyncSession, company_id: int, voucher_id: str) -> Voucher:
    found = await VoucherRepository(session, company_id).by_id(voucher_id)
    assert found is not None
    return found


async def start(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    sandbox: bool,
    voucher_code: str,
    user_id: int,
    card_id: int,
    claim: Claim,
) -> Redemption:
    """Start redeeming the voucher named by `voucher_code` for the user's card (records
    `voucher.redemption.started`). The redemption and its reservation commit (a recovery
    point of `claim`) before the code is emailed or the card credited, so a retry with the
    same key resumes that redemption instead of reserving again."""
    if claim.resumed and STARTED in claim.state:
        return await _resume_start(session, providers, company_id, claim)
    effective = await settings.for_company(session, sandbox=sandbox, company_id=company_id)
    _check_open(effective)
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    card = await find_card(session, company_id=company_id, card_id=card_id, user_id=user_id)
    card.refuse_if_cancelled()
    voucher = await VoucherRepository(session, company_id).by_code_hash(
        codes.code_hash(voucher_code)
    )
    if voucher is None:
        raise VoucherNotFound()
    now = utcnow()
    state = reported(voucher, now)
    if state == VoucherStatus.EXPIRED:
        raise VoucherExpired()
    if state == VoucherStatus.SCHEDULED:
        raise VoucherNotYetValid()
    if state == VoucherStatus.EXHAUSTED:
        raise VoucherExhausted()
    if card.currency != voucher.currency:
        raise VoucherCurrencyMismatch(
            f"The voucher is in {voucher.currency}; the card holds {card.currency}."
        )
    repository = RedemptionRepository(session, company_id)
    counters = VoucherCounters(repository)
    await _release_expired(session, company_id, voucher.id)
    if not await counters.reserve_for_user(voucher.id, user_id, voucher.per_user_limit):
        raise VoucherPerUserLimitReached()
    if not await counters.reserve(voucher.id, voucher.value_minor):
        fresh = await _voucher(session, company_id, voucher.id)
        if (
            fresh.maximum_total_uses is not None
            and fresh.successful_uses + fresh.reserved_uses >= fresh.maximum_total_uses
        ):
            raise VoucherUseLimitReached()
        if fresh.status == VoucherStatus.EXHAUSTED:
            raise VoucherExhausted()
        raise VoucherValueCapReached()
    redemption_id = str(uuid.uuid4())
    code = _new_code() if voucher.requires_email_2fa else None
    row = VoucherRedemption(
        id=redemption_id,
        voucher_id=voucher.id,
        user_id=user_id,
        card_id=card_id,
        amount_minor=voucher.value_minor,
        currency=voucher.currency,
        status=RedemptionStatus.PENDING_VERIFICATION.value,
        code_hash=_code_hash(redemption_id, code) if code is not None else None,
        failed_attempts=0,
        expires_at=now + timedelta(minutes=effective.values.verification_ttl_minutes),
    )
    await repository.add(row)
    await _record(session, row, voucher, "voucher.redemption.started")
    if code is None:
        await idempotency.checkpoint(session, claim, STARTED, **{STARTED: redemption_id})
        row = await _reread(session, company_id, redemption_id, lock=True)
        return await _verified(session, providers, row=row, voucher=voucher, claim=claim)
    mailer = configured(providers.mailer, "No email provider is configured.")
    await idempotency.checkpoint(session, claim, STARTED, **{STARTED: redemption_id})
    await _send_code(session, providers, mailer, row=row, email=user.email, code=code)
    return Redemption(await _reread(session, company_id, redemption_id), voucher)


async def _send_code(
    session: AsyncSession,
    providers: Providers,
    mailer: CodeMailer,
    *,
    row: VoucherRedemption,
    email: str,
    code: str,
) -> None:
    company_id, redemption_id = row.company_id, row.id
    await commit_then_call(
        session,
        providers.policy,
        provider=mailer.name,
        operation="send_code",
        call=lambda: mailer.send_code(
            company_id=company_id, reference=redemption_id, email=email, code=code
        ),
        idempotent=True,
    )


async def _resume_start(
    session: AsyncSession, providers: Providers, company_id: int, claim: Claim
) -> Redemption:
    """A retried start whose redemption was made: carry it on from where it stands. A code
    whose email may not have gone is replaced by a new one, sent now (only its hash is
    kept, so the first cannot be sent again)."""
    row = await _reread(session, company_id, str(claim.state[STARTED]), lock=True)
    voucher = await _voucher(session, company_id, row.voucher_id)
    if row.status == RedemptionStatus.PROCESSING:
        return await refresh(session, providers, row=row, voucher=voucher)
    if row.status != RedemptionStatus.PENDING_VERIFICATION:
        return Redemption(row, voucher)
    if row.code_hash is None:
        return await _verified(session, providers, row=row, voucher=voucher, claim=claim)
    mailer = configured(providers.mailer, "No email provider is configured.")
    user = await users.get_user(session, company_id=company_id, user_id=row.user_id)
    code = _new_code()
    row.code_hash = _code_hash(row.id, code)
    await session.flush()
    await _send_code(session, providers, mailer, row=row, email=user.email, code=code)
    return Redemption(await _reread(session, company_id, row.id), voucher)


async def verify(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    sandbox: bool,
    redemption_id: str,
    user_id: int | None,
    code: str,
    claim: Claim,
) -> Redemption:
    """Verify the one-time code and go on (approval, or the card credit). A redemption
    already decided is answered as it stands; one being credited is settled first."""
    await _known_user(session, company_id, user_id)
    repository = RedemptionRepository(session, company_id)
    row = await repository.find(redemption_id, lock=True)
    if row is None or (user_id is not None and row.user_id != user_id):
        raise RedemptionNotFound()
    voucher = await _voucher(session, company_id, row.voucher_id)
    if row.status == RedemptionStatus.PROCESSING:
        return await refresh(session, providers, row=row, voucher=voucher)
    if row.status != RedemptionStatus.PENDING_VERIFICATION:
        return Redemption(row, voucher)
    effective = await settings.for_company(session, sandbox=sandbox, company_id=company_id)
    if effective.values.shutdown_mode == ShutdownMode.STOP_ALL:
        await _fail(session, row, voucher, RedemptionStatus.FAILED, SHUT_DOWN)
        await session.commit()
        raise VouchersShutDown()
    if row.expires_at is not None and utcnow() >= row.expires_at:
        await _fail(session, row, voucher, RedemptionStatus.EXPIRED, EXPIRED)
        await session.commit()
        raise VerificationExpired()
    expected = row.code_hash or ""
    if not hmac.compare_digest(expected, _code_hash(row.id, code.strip())):
        await repository.count_failed_attempt(row.id)
        if row.failed_attempts + 1 >= MAX_ATTEMPTS:
            await _fail(session, row, voucher, RedemptionStatus.FAILED, LOCKED)
            await session.commit()
            raise RedemptionLocked()
        await session.commit()
        left = MAX_ATTEMPTS - row.failed_attempts - 1
        raise InvalidVerificationCode(
            f"The code is not the one sent for this redemption; {left} attempt(s) left."
        )
    return await _verified(session, providers, row=row, voucher=voucher, claim=claim)


async def _verified(
    session: AsyncSession,
    providers: Providers,
    *,
    row: VoucherRedemption,
    voucher: Voucher,
    claim: Claim,
) -> Redemption:
    repository = RedemptionRepository(session, row.company_id)
    if voucher.requires_whitelabel_approval:
        if not await repository.move(
            row.id,
            from_=[RedemptionStatus.PENDING_VERIFICATION],
            to=RedemptionStatus.PENDING_APPROVAL,
            expires_at=None,
            updated_at=utcnow(),
        ):
            return Redemption(await _reread(session, row.company_id, row.id), voucher)
        row = await _reread(session, row.company_id, row.id)
        await _record(session, row, voucher, "voucher.redemption.pending_approval")
        return Redemption(row, voucher)
    return await _credit(session, providers, row=row, voucher=voucher, claim=claim)


async def _credit(
    session: AsyncSession,
    providers: Providers,
    *,
    row: VoucherRedemption,
    voucher: Voucher,
    claim: Claim,
) -> Redemption:
    """The reservation becomes a use and the card is credited; the use and the ledger's
    reservation commit together before the card provider is asked."""
    company_id, redemption_id = row.company_id, row.id
    repository = RedemptionRepository(session, company_id)
    if not await repository.move(
        redemption_id,
        from_=HOLDING,
        to=RedemptionStatus.PROCESSING,
        funding_key=claim.derived_key(card_funding.LOAD_STEP),
        updated_at=utcnow(),
    ):
        return Redemption(await _reread(session, company_id, redemption_id), voucher)
    await VoucherCounters(repository).use(voucher.id, row.user_id, row.amount_minor)
    # The move succeeded, so no funding was reserved for this redemption yet (it would have
    # committed with the move): the top-up starts afresh, whatever point the claim recorded.
    claim.recovery_point = idempotency.STARTED
    money = Money(row.amount_minor, row.currency)
    try:
        funded = await card_funding.topup(
            session,
            providers,
            claim=claim,
            company_id=company_id,
            card_id=row.card_id,
            money=money,
            kind=FundingKind.VOUCHER,
            trigger=None,
            source=CompanyAccount.VOUCHERS,
            short=VoucherFundingShort,
        )
    except VoucherFundingShort:
        raise  # before anything was committed: the redemption waits as it was
    except (ProviderRejected, card_funding.FundingRejected, card_funding.FundingFailed) as error:
        return await _after_refusal(session, company_id, redemption_id, voucher, error)
    except card_funding.InsufficientCardBalance as error:
        return await _after_refusal(session, company_id, redemption_id, voucher, error)
    return await _completed(session, company_id, redemption_id, voucher, funded.funding.id)


async def _after_refusal(
    session: AsyncSession, company_id: int, redemption_id: str, voucher: Voucher, error: ApiError
) -> Redemption:
    row = await _reread(session, company_id, redemption_id, lock=True)
    repository = RedemptionRepository(session, company_id)
    if await repository.move(
        redemption_id,
        from_=[RedemptionStatus.PROCESSING],
        to=RedemptionStatus.FAILED,
        error_code=error.code,
        updated_at=utcnow(),
    ):
        await VoucherCounters(repository).unuse(voucher.id, row.user_id, row.amount_minor)
        row = await _reread(session, company_id, redemption_id)
        await _record(session, row, voucher, "voucher.redemption.failed")
    return Redemption(row, voucher)


async def _completed(
    session: AsyncSession, company_id: int, redemption_id: str, voucher: Voucher, funding_id: int
) -> Redemption:
    repository = RedemptionRepository(session, company_id)
    now = utcnow()
    moved = await repository.move(
        redemption_id,
        from_=[RedemptionStatus.PROCESSING],
        to=RedemptionStatus.COMPLETED,
        funding_id=funding_id,
        completed_at=now,
        updated_at=now,
    )
    row = await _reread(session, company_id, redemption_id)
    if moved:
        await _record(session, row, voucher, "voucher.redemption.completed")
        await funding_alerts.after_redemption(
            session, company_id=company_id, voucher=voucher, amount_minor=row.amount_minor
        )
    return Redemption(row, voucher)


async def approve(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    sandbox: bool,
    redemption_id: str,
    claim: Claim,
) -> Redemption:
    """The company approves a verified redemption that waits for it: the card is credited as
    after a verification. One already decided is answered as it stands; one not yet
    verified is 409 `REDEMPTION_NOT_AWAITING_APPROVAL`."""
    row, voucher = await _locked(session, company_id, redemption_id)
    if row.status == RedemptionStatus.PROCESSING:
        return await refresh(session, providers, row=row, voucher=voucher)
    if row.status in FINAL:
        return Redemption(row, voucher)
    if row.status != RedemptionStatus.PENDING_APPROVAL:
        raise RedemptionNotAwaitingApproval()
    effective = await settings.for_company(session, sandbox=sandbox, company_id=company_id)
    if effective.values.shutdown_mode == ShutdownMode.STOP_ALL:
        await _fail(session, row, voucher, RedemptionStatus.FAILED, SHUT_DOWN)
        await session.commit()
        raise VouchersShutDown()
    return await _credit(session, providers, row=row, voucher=voucher, claim=claim)


async def reject(session: AsyncSession, *, company_id: int, redemption_id: str) -> Redemption:
    """The company refuses a redemption waiting for it (verified or not): `REJECTED`, its
    reservation released. One already decided is answered as it stands."""
    row, voucher = await _locked(session, company_id, redemption_id)
    if row.status in HOLDING:
        await _fail(session, row, voucher, RedemptionStatus.REJECTED, REJECTED)
        row = await _reread(session, company_id, redemption_id)
    return Redemption(row, voucher)


async def _locked(
    session: AsyncSession, company_id: int, redemption_id: str
) -> tuple[VoucherRedemption, Voucher]:
    row = await RedemptionRepository(session, company_id).find(redemption_id, lock=True)
    if row is None:
        raise RedemptionNotFound()
    return row, await _voucher(session, company_id, row.voucher_id)


async def refresh(
    session: AsyncSession, providers: Providers, *, row: VoucherRedemption, voucher: Voucher
) -> Redemption:
    """A redemption left `PROCESSING` (the card provider did not answer): settle the card's
    pending fundings, then take the voucher funding's outcome."""
    company_id, redemption_id, card_id = row.company_id, row.id, row.card_id
    funding = (
        await card_funding.funding_by_key(session, company_id, row.funding_key)
        if row.funding_key
        else None
    )
    if funding is not None and funding.status == FundingStatus.PENDING:
        await card_funding.settle_pending(
            session, providers, company_id=company_id, card_id=card_id
        )
        funding = await card_funding.funding_of(session, company_id, funding.id)
    if funding is None or funding.status == FundingStatus.PENDING:
        return Redemption(await _reread(session, company_id, redemption_id), voucher)
    if funding.status == FundingStatus.COMPLETED:
        return await _completed(session, company_id, redemption_id, voucher, funding.id)
    return await _after_refusal(
        session, company_id, redemption_id, voucher, card_funding.FundingFailed()
    )


async def get(
    session: AsyncSession, *, company_id: int, redemption_id: str, user_id: int | None = None
) -> Redemption:
    await _known_user(session, company_id, user_id)
    row = await RedemptionRepository(session, company_id).find(redemption_id)
    if row is None or (user_id is not None and row.user_id != user_id):
        raise RedemptionNotFound()
    return Redemption(row, await _voucher(session, company_id, row.voucher_id))


async def _known_user(session: AsyncSession, company_id: int, user_id: int | None) -> None:
    """A `userId` that names no user of the company is 404 `USER_NOT_FOUND`, as everywhere,
    before the redemption is looked for."""
    if user_id is not None:
        await users.get_user(session, company_id=company_id, user_id=user_id)


async def _fail(
    session: AsyncSession,
    row: VoucherRedemption,
    voucher: Voucher,
    status: RedemptionStatus,
    error_code: str,
) -> bool:
    """End a waiting redemption and release its reservation (once, whoever gets there)."""
    repository = RedemptionRepository(session, row.company_id)
    if not await repository.move(
        row.id, from_=HOLDING, to=status, error_code=error_code, updated_at=utcnow()
    ):
        return False
    await VoucherCounters(repository).release(voucher.id, row.user_id, row.amount_minor)
    fresh = await _reread(session, row.company_id, row.id)
    await _record(session, fresh, voucher, f"voucher.redemption.{status.value.lower()}")
    return True


async def _release_expired(session: AsyncSession, company_id: int, voucher_id: str) -> None:
    """Expire the voucher's redemptions whose code was not verified in time, releasing what
    they hold, so a voucher's limits count only live reservations. Each in a transaction of
    its own: a release takes the user's row and then the voucher's, and holding the voucher
    while taking another user's row could deadlock with a parallel start."""
    repository = RedemptionRepository(session, company_id)
    for redemption_id in await repository.expired_holding(voucher_id, now=utcnow()):
        row = await repository.find(redemption_id, lock=True)
        if row is not None:
            voucher = await _voucher(session, company_id, voucher_id)
            if await _fail(session, row, voucher, RedemptionStatus.EXPIRED, EXPIRED):
                await session.commit()


async def expire_due(session: AsyncSession, *, limit: int = 500) -> int:
    """Expire the redemptions whose code was not verified in time and release what they
    hold (maintenance job; each company's rows under its own tenant binding)."""
    expired = 0
    for company_id, redemption_id in await repository.expired_waiting(
        session, now=utcnow(), limit=limit
    ):
        bind_company(session, company_id)
        row = await RedemptionRepository(session, company_id).find(redemption_id, lock=True)
        if row is None:
            continue
        voucher = await _voucher(session, company_id, row.voucher_id)
        if await _fail(session, row, voucher, RedemptionStatus.EXPIRED, EXPIRED):
            await session.commit()  # one at a time, as `_release_expired` says why
            expired += 1
    return expired


async def _reread(
    session: AsyncSession, company_id: int, redemption_id: str, *, lock: bool = False
) -> VoucherRedemption:
    row = await RedemptionRepository(session, company_id).find(redemption_id, lock=lock)
    if row is None:
        raise RedemptionNotFound()
    return row


async def _record(
    session: AsyncSession, row: VoucherRedemption, voucher: Voucher, type_: str
) -> None:
    await events.record(
        session,
        company_id=row.company_id,
        type_=type_,
        domain="voucher",
        data={
            "redemptionId": row.id,
            "voucherId": voucher.id,
            "userId": row.user_id,
            "cardId": row.card_id,
            "amount": Money(row.amount_minor, row.currency).amount,
            "currency": row.currency,
            "status": row.status,
            "errorCode": row.error_code,
        },
    )


def transaction_reference(row: VoucherRedemption) -> str | None:
    """The card top-up that credited the voucher (its `OrderId`), once completed."""
    return str(row.funding_id) if row.funding_id is not None else None
