"""Referral programmes: a company's one programme, who referred whom, each referrer's level
and its history, and the reward ledger.

A reward row is the ledger item the partner reads: its amount is fixed when it is created
(`Explanation` says how) and only its `stage` moves afterwards, by conditional UPDATEs
(`finplat.referrals.repository`), so a reward is released, cancelled or paid exactly once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class ReferralProgram(CompanyOwned, Timestamped, Base):
    """The company's referral programme (one per company); `revision` grows on every change."""

    __tablename__ = "referral_programs"
    __table_args__ = (UniqueConstraint("company_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # a UUID
    status: Mapped[str] = mapped_column(String(16))
    revision: Mapped[int] = mapped_column(Integer)
    level_basis: Mapped[str] = mapped_column(String(32))
    level_lookback_months: Mapped[int] = mapped_column(Integer)
    commission_eligibility_months: Mapped[int] = mapped_column(Integer)
    delivery_mode: Mapped[str] = mapped_column(String(16))
    payout_currency: Mapped[str] = mapped_column(String(8))
    voucher_claim_days: Mapped[int] = mapped_column(Integer)
    hold_days: Mapped[int] = mapped_column(Integer)
    qualifying_topup_minor: Mapped[int] = mapped_column(BigInteger)
    # The levels as configured, lowest first: [{code, name, threshold, commission_basis,
    # commission_bps, welcome_minor, qualification_minor}] (amounts in the payout currency).
    levels: Mapped[list[dict[str, Any]]] = mapped_column(JSON)


class ReferralRelationship(CompanyOwned, Timestamped, Base):
    """A referred user and who referred them; a user is referred at most once."""

    __tablename__ = "referral_relationships"
    __table_args__ = (
        UniqueConstraint("company_id", "referred_user_id"),
        Index("ix_referral_relationships_referrer", "company_id", "referrer_user_id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # a UUID
    program_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("referral_programs.id", ondelete="CASCADE")
    )
    referrer_user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE")
    )
    referred_user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE")
    )
    qualified_at: Mapped[datetime | None] = mapped_column(default=None)


class ReferralMember(CompanyOwned, Timestamped, Base):
    """A referrer in the programme and the level they are at."""

    __tablename__ = "referral_members"
    __table_args__ = (UniqueConstraint("company_id", "program_id", "user_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    program_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("referral_programs.id", ondelete="CASCADE")
    )
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    level_code: Mapped[str] = mapped_column(String(32))


class ReferralLevelChange(CompanyOwned, Base):
    """One change of a member's level, with its reason."""

    __tablename__ = "referral_level_changes"
    __table_args__ = (
        Index("ix_referral_level_changes_member", "company_id", "program_id", "user_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    program_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("referral_programs.id", ondelete="CASCADE")
    )
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    from_level: Mapped[str | None] = mapped_column(String(32), default=None)
    to_level: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(String(40))
    program_revision: Mapped[int] = mapped_column(Integer)
    changed_at: Mapped[datetime] = mapped_column()


class ReferralReward(CompanyOwned, Timestamped, Base):
    """One item of the reward ledger."""

    __tablename__ = "referral_rewards"
    __table_args__ = (
        # A top-up or a relationship gives each kind of reward once (per boost).
        UniqueConstraint(
            "company_id", "relationship_id", "event_type", "source_funding_id", "boost_id"
        ),
        Index("ix_referral_rewards_beneficiary", "company_id", "beneficiary_user_id", "id"),
        Index("ix_referral_rewards_stage", "stage", "held_until"),
        # A reward delivered as a voucher is assigned once: its voucher and assignment ids.
        Index("ux_referral_rewards_voucher", "voucher_id", unique=True),
        Index("ux_referral_rewards_assignment", "voucher_assignment_id", unique=True),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # a UUID
    program_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("referral_programs.id", ondelete="CASCADE")
    )
    relationship_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("referral_relationships.id", ondelete="CASCADE")
    )
    beneficiary_user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE")
    )
    friend_user_id: Mapped[int] = mapped_column(BigIntId)
    event_type: Mapped[str] = mapped_column(String(24))  # WELCOME | QUALIFICATION | TOPUP
    beneficiary_role: Mapped[str] = mapped_column(String(16))  # REFERRER | REFERRED
    level_code: Mapped[str] = mapped_column(String(32))
    basis_minor: Mapped[int] = mapped_column(BigInteger)
    basis_currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    delivery_mode: Mapped[str] = mapped_column(String(16))
    stage: Mapped[str] = mapped_column(String(16))
    explanation: Mapped[dict[str, Any]] = mapped_column(JSON)
    # 0 for rewards no top-up gave (the unique key then holds one per relationship).
    source_funding_id: Mapped[int] = mapped_column(BigInteger, default=0)
    source_card_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    topup_volume_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    boost_id: Mapped[str] = mapped_column(String(36), default="")  # "" unless a boost's award
    held_until: Mapped[datetime | None] = mapped_column(default=None)
    hold_reason: Mapped[str | None] = mapped_column(String(40), default=None)
    cancel_reason: Mapped[str | None] = mapped_column(String(40), default=None)
    credit_id: Mapped[str | None] = mapped_column(String(36), default=None)
    credit_card_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # The card funding's provider key while the reward is being paid (`PAYING`).
    credit_funding_key: Mapped[str | None] = mapped_column(String(64), default=None)
    occurred_at: Mapped[datetime] = mapped_column()
    released_at: Mapped[datetime | None] = mapped_column(default=None)
    cancelled_at: Mapped[datetime | None] = mapped_column(default=None)
    paid_at: Mapped[datetime | None] = mapped_column(default=None)
    # Delivery `VOUCHER`: the voucher assigned to the beneficiary when the reward was released
    # (set by the same conditional UPDATE that made it `PAYABLE`, so exactly once).
    voucher_id: Mapped[str | None] = mapped_column(String(36), default=None)
    voucher_assignment_id: Mapped[str | None] = mapped_column(String(36), default=None)
    voucher_assigned_at: Mapped[datetime | None] = mapped_column(default=None)
    voucher_valid_until: Mapped[datetime | None] = mapped_column(default=None)


class ReferralTopupSeen(CompanyOwned, Base):
    """A completed top-up the accrual has looked at (whatever it gave), so it looks once."""

    __tablename__ = "referral_topups_seen"

    funding_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    seen_at: Mapped[datetime] = mapped_column()


class ReferralBoost(CompanyOwned, Timestamped, Base):
    """A time-boxed boost of the programme: a multiplier of top-up rewards, or an award for
    a number of qualified friends. `allocated_awards` and `reserved_budget_minor` move only by
    conditional UPDATEs that hold `maximum_awards` and `funded_budget_minor`."""

    __tablename__ = "referral_boosts"
    __table_args__ = (Index("ix_referral_boosts_program", "company_id", "program_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # a UUID
    program_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("referral_programs.id", ondelete="CASCADE")
    )
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16))  # MULTIPLIER | MILESTONE
    status: Mapped[str] = mapped_column(String(16))  # ACTIVE | PAUSED
    starts_at: Mapped[datetime] = mapped_column()
    ends_at: Mapped[datetime] = mapped_column()
    multiplier: Mapped[str | None] = mapped_column(String(16), default=None)  # exact decimal
    qualified_friend_count: Mapped[int | None] = mapped_column(Integer, default=None)
    milestone_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)
    maximum_incremental_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)
    maximum_awards: Mapped[int] = mapped_column(Integer)
    funded_budget_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    allocated_awards: Mapped[int] = mapped_column(Integer, default=0)
    reserved_budget_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    policy_hash: Mapped[str] = mapped_column(String(64))
    paused_at: Mapped[datetime | None] = mapped_column(default=None)


class ReferralCommunityMember(CompanyOwned, Timestamped, Base):
    """A user enrolled in the programme's community (multi-level) plan: they earn `l2_bps`
    of the top-ups of their friends' friends and `l3_bps` one level further, until revoked
    or expired."""

    __tablename__ = "referral_community_members"
    __table_args__ = (UniqueConstraint("company_id", "program_id", "user_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # a UUID
    program_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("referral_programs.id", ondelete="CASCADE")
    )
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    plan: Mapped[str] = mapped_column(String(64))
    parent_user_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    plan_revision: Mapped[int] = mapped_column(Integer)
    l2_bps: Mapped[int] = mapped_column(Integer)
    l3_bps: Mapped[int] = mapped_column(Integer)
    enabled_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime | None] = mapped_column(default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)
    revoke_reason: Mapped[str | None] = mapped_column(String(500), default=None)
    status: Mapped[str] = mapped_column(String(16))  # ACTIVE | REVOKED
    agreement_reference: Mapped[str | None] = mapped_column(String(100), default=None)
    notes: Mapped[str | None] = mapped_column(String(1000), default=None)
