"""Referral programmes over HTTP: the programme and its overview under the admin routes, the
relationships, members' level history and the reward ledger under the company's routes."""

from __future__ import annotations

from decimal import Decimal

from fastapi import Path, Request, status

from finplat.errors import error_responses
from finplat.http.admin_routing import (
    CompanyIdQuery,
    CurrentAdmin,
    admin_router,
    claim_admin_request,
    target_company,
)
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import from_minor
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import UserIdPath
from finplat.referrals import (
    assigned_vouchers,
    boosts,
    community,
    ledger,
    payouts,
    programs,
    relationships,
)
from finplat.referrals.schemas import (
    UUID_PATTERN,
    AssignedVoucherPage,
    AssignedVoucherResponse,
    CommunityEnrolment,
    CommunityMemberResponse,
    CommunityRevocation,
    ProgramIdQuery,
    ProgramRevisionExpectation,
    ReferralBoostCreate,
    ReferralBoostList,
    ReferralBoostResponse,
    ReferralLevelChangeResponse,
    ReferralLevelHistoryPage,
    ReferralOverviewResponse,
    ReferralProgramConfiguration,
    ReferralProgramResponse,
    ReferralRelationshipCreate,
    ReferralRelationshipResponse,
    ReferralRewardPage,
    ReferralRewardPayment,
    ReferralRewardResponse,
)

admin = admin_router(tags=["Referral administration"])
router = api_router(tags=["Referrals"])

KEYS = (
    "A platform operator key acts on the company named by `companyId`; a company key on its "
    "own (another `companyId` is 404)."
)
ProgramIdPath = Path(pattern=UUID_PATTERN, description="The programme's `Id`.")
RewardIdPath = Path(pattern=UUID_PATTERN, description="The reward's `Id`.")
AssignmentIdPath = Path(pattern=UUID_PATTERN, description="The assigned voucher's `AssignmentId`.")
BoostIdPath = Path(pattern=UUID_PATTERN, description="The boost's `Id`.")


@admin.get(
    "/api/v2/admin/referrals/program",
    response_model=ReferralProgramResponse,
    summary="Read the company's referral programme",
    description="`Exists` is false (and the other fields null) until the programme is "
    "configured with `PUT`. " + KEYS,
    responses=error_responses(400, 404),
)
async def read_program(
    session: DbSession, caller: CurrentAdmin, companyId: CompanyIdQuery = None
) -> ReferralProgramResponse:
    company_id = await target_company(session, caller, companyId)
    return ReferralProgramResponse.of(await programs.current(session, company_id=company_id))


@admin.put(
    "/api/v2/admin/referrals/program",
    response_model=ReferralProgramResponse,
    summary="Configure the company's referral programme",
    description="Creates the company's one programme or replaces its terms as a whole; "
    "`Revision` grows by one on every change. Levels go lowest first, the first with "
    "`Threshold` 0, thresholds increasing, codes unique (400 `INVALID_REFERRAL_PROGRAM` "
    "otherwise); `PayoutCurrency` is fixed once the programme exists (409 "
    "`PAYOUT_CURRENCY_FIXED`). With "
    "`ExpectedRevision`, a programme changed meanwhile is 409 `STALE_PROGRAM_REVISION`. A "
    "member whose level was removed takes the level they reach (`PROGRAM_CHANGED`). Safe "
    "to retry with `Idempotency-Key` (a replay answers the first change, without another "
    "bump). " + KEYS,
    responses=error_responses(400, 404, 409),
)
async def configure_program(
    body: ReferralProgramConfiguration,
    request: Request,
    session: DbSession,
    caller: CurrentAdmin,
    companyId: CompanyIdQuery = None,
    idempotency_key: IdempotencyKeyHeader = None,
) -> ReferralProgramResponse:
    company_id = await target_company(session, caller, companyId)
    await claim_admin_request(request, session, caller, company_id=company_id, key=idempotency_key)
    program = await programs.configure(
        session,
        company_id=company_id,
        terms=programs.ProgramTerms(
            status=body.Status.value,
            level_basis=body.LevelBasis,
            level_lookback_months=body.LevelLookbackMonths,
            commission_eligibility_months=body.CommissionEligibilityMonths,
            delivery_mode=body.DeliveryMode.value,
            payout_currency=body.PayoutCurrency,
            voucher_claim_days=body.VoucherClaimDays,
            hold_days=body.HoldDays,
            qualifying_topup_minimum=body.QualifyingTopupMinimum or Decimal(0),
            levels=tuple(
                programs.LevelTerms(
                    code=level.Code,
                    name=level.Name,
                    threshold=level.Threshold,
                    commission_basis=level.CommissionBasis,
                    commission_bps=level.CommissionBps,
                    welcome=level.WelcomeReward or Decimal(0),
                    qualification=level.QualificationReward or Decimal(0),
                )
                for level in body.Levels
            ),
        ),
        expected_revision=body.ExpectedRevision,
    )
    return ReferralProgramResponse.of(program)


@admin.get(
    "/api/v2/admin/referrals/overview",
    response_model=ReferralOverviewResponse,
    summary="Overview of the company's referral programme",
    description="Totals over the reward ledger, in the programme's `PayoutCurrency`: "
    "`PendingLiability` sums the rewards not yet paid nor cancelled (`PENDING`, `HELD`, "
    "`PAYABLE`, `PAYING`), `PaidCommission` the `PAID` ones, `QualifyingTopupVolume` the "
    "friends' top-ups that earned a top-up reward (cancelled ones excepted). "
    "`TotalRelationships` counts referred friends, `SuccessfulReferrals` those who made a "
    "qualifying top-up. " + KEYS,
    responses=error_responses(400, 404),
)
async def read_overview(
    session: DbSession, caller: CurrentAdmin, companyId: CompanyIdQuery = None
) -> ReferralOverviewResponse:
    company_id = await target_company(session, caller, companyId)
    seen = await ledger.overview(session, company_id=company_id)
    currency = seen.program.payout_currency if seen.program is not None else None

    def amount(minor: int) -> Decimal:
        return from_minor(minor, currency) if currency else Decimal(0)

    return ReferralOverviewResponse(
        Program=ReferralProgramResponse.of(seen.program),
        TotalRelationships=seen.relationships,
        SuccessfulReferrals=seen.qualified,
        QualifyingTopupVolume=amount(seen.totals.topup_volume_minor),
        PendingLiability=amount(seen.totals.pending_liability_minor),
        PaidCommission=amount(seen.totals.paid_minor),
        Currency=currency,
    )


@router.post(
    "/api/v2/referrals/programs/{programId}/relationships",
    response_model=ReferralRelationshipResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Record who referred a user",
    description="Call it when the referred user signs up (after `POST /api/v2/users`). A "
    "user is referred once (409 `ALREADY_REFERRED`); not by themselves (400 "
    "`SELF_REFERRAL`) nor by a friend they referred (409 `REFERRAL_CYCLE`); the programme "
    "must be `ACTIVE` (409 `REFERRAL_PROGRAM_NOT_ACTIVE`). The referrer joins the programme "
    "at its lowest level. A welcome reward at the referrer's level is promised to the "
    "friend: `PENDING` until the friend's identity is approved.",
    responses=error_responses(400, 404, 409),
)
async def record_relationship(
    body: ReferralRelationshipCreate,
    session: DbSession,
    principal: CurrentPrincipal,
    programId: str = ProgramIdPath,
) -> ReferralRelationshipResponse:
    made = await relationships.record(
        session,
        company_id=principal.company_id,
        program_id=programId,
        referrer_user_id=body.ReferrerUserId,
        referred_user_id=body.ReferredUserId,
    )
    return ReferralRelationshipResponse.of(made)


@router.get(
    "/api/v2/referrals/programs/{programId}/members/{userId}/level-history",
    response_model=ReferralLevelHistoryPage,
    summary="A member's level changes",
    description="Oldest first, each with its reason: `JOINED`, `THRESHOLD_REACHED`, "
    "`THRESHOLD_LOST` or `PROGRAM_CHANGED`, and the programme revision it happened under.",
    responses=error_responses(400, 404),
)
async def level_history(
    userId: UserIdPath,
    page: PageParams,
    session: DbSession,
    principal: CurrentPrincipal,
    programId: str = ProgramIdPath,
) -> ReferralLevelHistoryPage:
    rows = await ledger.level_history(
        session, company_id=principal.company_id, program_id=programId, user_id=userId, page=page
    )
    return ReferralLevelHistoryPage(
        Items=[ReferralLevelChangeResponse.of(r) for r in rows.rows],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=rows.has_more,
    )


@router.get(
    "/api/v2/users/{userId}/referrals/rewards",
    response_model=ReferralRewardPage,
    summary="The user's referral rewards",
    description="The reward ledger of the user as beneficiary, oldest first. `Stage`: "
    "`PENDING` (the friend's identity not yet approved), `HELD` (until `Holds[].ReleasesAt`; "
    "a top-up unloaded meanwhile cancels the rewards it gave), `PAYABLE`, `PAYING`, `PAID` "
    "or `CANCELLED`. `Explanation` says how `Amount` was computed.",
    responses=error_responses(400, 404),
)
async def list_rewards(
    userId: UserIdPath,
    page: PageParams,
    session: DbSession,
    principal: CurrentPrincipal,
    programId: ProgramIdQuery = None,
) -> ReferralRewardPage:
    found = await ledger.rewards_of(
        session, company_id=principal.company_id, user_id=userId, program_id=programId, page=page
    )
    return ReferralRewardPage(
        Items=[
            ReferralRewardResponse.of(r, found.aliases.get(r.friend_user_id, ""))
            for r in found.rows.rows
        ],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=found.rows.has_more,
    )


@router.post(
    "/api/v2/users/{userId}/referrals/rewards/{rewardId}/pay",
    response_model=ReferralRewardResponse,
    summary="Pay a payable reward to the user's card",
    description="Credits the reward's `Amount` to `CardId` (the beneficiary's card in the "
    "reward's currency, else 404 / 409 `REFERRAL_REWARD_CARD_MISMATCH`) from the company's "
    "rewards account (funded with the sandbox funding's `Account: REWARDS`), without a fee. "
    "Only a `PAYABLE` reward is paid (409 `REFERRAL_REWARD_NOT_PAYABLE`); too little in the "
    "rewards account is 409 `REFERRAL_REWARDS_FUNDING_INSUFFICIENT` and nothing changes. "
    "Safe to retry with `Idempotency-Key`.",
    responses=error_responses(400, 404, 409, 503),
)
async def pay_reward(
    userId: UserIdPath,
    body: ReferralRewardPayment,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    rewardId: str = RewardIdPath,
    idempotency_key: IdempotencyKeyHeader = None,
) -> ReferralRewardResponse:
    claim = await claim_request(request, session, principal, idempotency_key)
    reward = await payouts.pay(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        reward_id=rewardId,
        card_id=body.CardId,
        claim=claim,
    )
    names = await ledger.rewards_aliases(
        session, company_id=principal.company_id, user_ids={reward.friend_user_id}
    )
    return ReferralRewardResponse.of(reward, names.get(reward.friend_user_id, ""))


@router.get(
    "/api/v2/users/{userId}/referrals/vouchers",
    response_model=AssignedVoucherPage,
    summary="The user's assigned vouchers",
    description="Rewards of a programme delivering `VOUCHER`, each assigned to the user as a "
    "voucher when released, oldest first: renderable in a partner-hosted experience (no code: "
    "the voucher is the user's). `Status`: `ASSIGNED` (redeemable until `ValidUntil`), "
    "`REDEEMING`, `REDEEMED` or `EXPIRED`.",
    responses=error_responses(400, 404),
)
async def list_assigned_vouchers(
    userId: UserIdPath, page: PageParams, session: DbSession, principal: CurrentPrincipal
) -> AssignedVoucherPage:
    rows = await assigned_vouchers.of_user(
        session, company_id=principal.company_id, user_id=userId, page=page
    )
    return AssignedVoucherPage(
        Items=[AssignedVoucherResponse.of(r) for r in rows.rows],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=rows.has_more,
    )


@router.post(
    "/api/v2/users/{userId}/referrals/vouchers/{assignmentId}/redeem",
    response_model=AssignedVoucherResponse,
    summary="Redeem an assigned voucher onto the user's card",
    description="Credits the voucher's `Amount` to `CardId` (the user's card in its currency, "
    "else 404 / 409 `REFERRAL_REWARD_CARD_MISMATCH`) from the company's rewards account, "
    "without a fee; its reward is then `PAID`. Once only (409 `REFERRAL_REWARD_NOT_PAYABLE`); "
    "after `ValidUntil` 409 `REFERRAL_VOUCHER_EXPIRED` (the reward is cancelled); too little in "
    "the rewards account is 409 `REFERRAL_REWARDS_FUNDING_INSUFFICIENT` and nothing changes. "
    "Safe to retry with `Idempotency-Key`.",
    responses=error_responses(400, 404, 409, 503),
)
async def redeem_assigned_voucher(
    userId: UserIdPath,
    body: ReferralRewardPayment,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    assignmentId: str = AssignmentIdPath,
    idempotency_key: IdempotencyKeyHeader = None,
) -> AssignedVoucherResponse:
    claim = await claim_request(request, session, principal, idempotency_key)
    reward = await assigned_vouchers.redeem(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        assignment_id=assignmentId,
        card_id=body.CardId,
        claim=claim,
    )
    return AssignedVoucherResponse.of(reward)


# ---------------------------------------------------------------------------------- boosts


@router.post(
    "/api/v2/referrals/programs/{programId}/boosts",
    response_model=ReferralBoostResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Create a boost",
    description="A time-boxed boost in [`StartsAt`, `EndsAt`): `MULTIPLIER` (`Multiplier`, "
    "optional `MaximumIncrementalReward`) adds to each top-up reward earned in the window; "
    "`MILESTONE` (`QualifiedFriendCount`, `MilestoneAmount`) awards a referrer whose friends "
    "referred in the window reach that many qualified, once. Awards stop at "
    "`MaximumAwards` or when the next would pass `FundedBudget` (`AllocatedAwards`, "
    "`ReservedBudget`). Amounts are in the programme's `PayoutCurrency`. Bumps the "
    "programme's revision; with `ExpectedProgramRevision`, a programme changed since is 409 "
    "`STALE_PROGRAM_REVISION`. `PolicyHash` identifies the boost's and the programme's "
    "rules it runs under. Safe to retry with `Idempotency-Key`.",
    responses=error_responses(400, 404, 409),
)
async def create_boost(
    body: ReferralBoostCreate,
    request: Request,
    session: DbSession,
    principal: CurrentPrincipal,
    programId: str = ProgramIdPath,
    idempotency_key: IdempotencyKeyHeader = None,
) -> ReferralBoostResponse:
    await claim_request(request, session, principal, idempotency_key)
    boost = await boosts.create(
        session,
        company_id=principal.company_id,
        program_id=programId,
        terms=boosts.BoostTerms(
            name=body.Name,
            kind=body.Kind,
            starts_at=body.StartsAt,
            ends_at=body.EndsAt,
            multiplier=body.Multiplier,
            qualified_friend_count=body.QualifiedFriendCount,
            milestone_amount=body.MilestoneAmount,
            maximum_incremental_reward=body.MaximumIncrementalReward,
            maximum_awards=body.MaximumAwards,
            funded_budget=body.FundedBudget,
        ),
        expected_revision=body.ExpectedProgramRevision,
    )
    program = await programs.require(session, company_id=principal.company_id, program_id=programId)
    return ReferralBoostResponse.of(boost, program.revision)


@router.get(
    "/api/v2/referrals/programs/{programId}/boosts",
    response_model=ReferralBoostList,
    summary="List the programme's boosts",
    description="Oldest first. `Status`: `ACTIVE`, `PAUSED`, `SCHEDULED` (before "
    "`StartsAt`), `ENDED` (from `EndsAt`) or `EXHAUSTED` (every award allocated).",
    responses=error_responses(400, 404),
)
async def list_boosts(
    session: DbSession, principal: CurrentPrincipal, programId: str = ProgramIdPath
) -> ReferralBoostList:
    rows = await boosts.of_program(session, company_id=principal.company_id, program_id=programId)
    return ReferralBoostList(Boosts=[ReferralBoostResponse.of(b) for b in rows])


@router.post(
    "/api/v2/referrals/programs/{programId}/boosts/{boostId}/pause",
    response_model=ReferralBoostResponse,
    summary="Pause a boost",
    description="No award is allocated while paused. `ExpectedProgramRevision` must be the "
    "programme's current `Revision` (409 `STALE_PROGRAM_REVISION` otherwise: read it again); "
    "the pause bumps it. A paused boost is answered as it stands.",
    responses=error_responses(400, 404, 409),
)
async def pause_boost(
    body: ProgramRevisionExpectation,
    session: DbSession,
    principal: CurrentPrincipal,
    programId: str = ProgramIdPath,
    boostId: str = BoostIdPath,
) -> ReferralBoostResponse:
    boost = await boosts.pause(
        session,
        company_id=principal.company_id,
        program_id=programId,
        boost_id=boostId,
        expected_revision=body.ExpectedProgramRevision,
    )
    program = await programs.require(session, company_id=principal.company_id, program_id=programId)
    return ReferralBoostResponse.of(boost, program.revision)


@router.post(
    "/api/v2/referrals/programs/{programId}/boosts/{boostId}/resume",
    response_model=ReferralBoostResponse,
    summary="Resume a paused boost",
    description="As pause, with `ExpectedProgramRevision`; a boost that is not paused is 409 "
    "`REFERRAL_BOOST_NOT_PAUSED`.",
    responses=error_responses(400, 404, 409),
)
async def resume_boost(
    body: ProgramRevisionExpectation,
    session: DbSession,
    principal: CurrentPrincipal,
    programId: str = ProgramIdPath,
    boostId: str = BoostIdPath,
) -> ReferralBoostResponse:
    boost = await boosts.resume(
        session,
        company_id=principal.company_id,
        program_id=programId,
        boost_id=boostId,
        expected_revision=body.ExpectedProgramRevision,
    )
    program = await programs.require(session, company_id=principal.company_id, program_id=programId)
    return ReferralBoostResponse.of(boost, program.revision)


# ------------------------------------------------------------------------------- community


@router.post(
    "/api/v2/referrals/programs/{programId}/community/members",
    response_model=CommunityMemberResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Enrol a user in the programme's community",
    description="The member earns `L2Bps` of the top-ups of their friends' friends and "
    "`L3Bps` one level further (on the basis of the direct referrer's level), from now until "
    "`ExpiresAt` or revocation. `ParentUserId` is who referred the member. Once per user "
    "(409 `COMMUNITY_MEMBER_EXISTS`). Bumps the programme's revision (`PlanRevision`).",
    responses=error_responses(400, 404, 409),
)
async def enrol_member(
    body: CommunityEnrolment,
    session: DbSession,
    principal: CurrentPrincipal,
    programId: str = ProgramIdPath,
) -> CommunityMemberResponse:
    member = await community.enrol(
        session,
        company_id=principal.company_id,
        program_id=programId,
        enrolment=community.Enrolment(
            user_id=body.UserId,
            plan=body.Plan,
            l2_bps=body.L2Bps,
            l3_bps=body.L3Bps,
            expires_at=body.ExpiresAt,
            agreement_reference=body.AgreementReference,
            notes=body.Notes,
        ),
    )
    return CommunityMemberResponse.of(member)


@router.get(
    "/api/v2/referrals/programs/{programId}/community/members/{userId}",
    response_model=CommunityMemberResponse,
    summary="A community member",
    responses=error_responses(400, 404),
)
async def read_member(
    userId: UserIdPath,
    session: DbSession,
    principal: CurrentPrincipal,
    programId: str = ProgramIdPath,
) -> CommunityMemberResponse:
    member = await community.member(
        session, company_id=principal.company_id, program_id=programId, user_id=userId
    )
    return CommunityMemberResponse.of(member)


@router.post(
    "/api/v2/referrals/programs/{programId}/community/members/{userId}/revoke",
    response_model=CommunityMemberResponse,
    summary="Revoke a community membership",
    description="`Reason` is required. No commission accrues to the member after this; what "
    "accrued before stays in the ledger. A revoked member is answered as it stands. Bumps the "
    "programme's revision.",
    responses=error_responses(400, 404),
)
async def revoke_member(
    userId: UserIdPath,
    body: CommunityRevocation,
    session: DbSession,
    principal: CurrentPrincipal,
    programId: str = ProgramIdPath,
) -> CommunityMemberResponse:
    member = await community.revoke(
        session,
        company_id=principal.company_id,
        program_id=programId,
        user_id=userId,
        reason=body.Reason,
    )
    return CommunityMemberResponse.of(member)
