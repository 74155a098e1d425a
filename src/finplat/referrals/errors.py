"""The referral programme's refusals."""

from __future__ import annotations

from finplat.errors import ApiError, Conflict, NotFound, ValidationFailed


class InvalidReferralProgram(ValidationFailed):
    code = "INVALID_REFERRAL_PROGRAM"
    message = "The programme's terms are not consistent."


class PayoutCurrencyFixed(Conflict):
    """The request is well-formed; the stored programme, whose ledger is in its currency,
    makes it wrong."""

    code = "PAYOUT_CURRENCY_FIXED"
    message = "The payout currency is fixed once the programme exists: its ledger is in it."


class ReferralProgramNotFound(NotFound):
    code = "REFERRAL_PROGRAM_NOT_FOUND"
    message = "No referral programme with that id."


class ReferralProgramNotActive(Conflict):
    code = "REFERRAL_PROGRAM_NOT_ACTIVE"
    message = "The referral programme is not active."


class SelfReferral(ValidationFailed):
    code = "SELF_REFERRAL"
    message = "A user cannot refer themselves."


class AlreadyReferred(Conflict):
    code = "ALREADY_REFERRED"
    message = "That user was already referred."


class ReferralCycle(Conflict):
    code = "REFERRAL_CYCLE"
    message = "The referrer was referred by that user."


class RewardNotFound(NotFound):
    code = "REFERRAL_REWARD_NOT_FOUND"
    message = "No referral reward with that id for that user."


class RewardNotPayable(Conflict):
    code = "REFERRAL_REWARD_NOT_PAYABLE"
    message = "Only a PAYABLE reward can be paid."


class RewardCardMismatch(Conflict):
    code = "REFERRAL_REWARD_CARD_MISMATCH"
    message = "The reward is paid to a card of its beneficiary in the reward's currency."


class RewardsFundingShort(ApiError):
    status = 409
    code = "REFERRAL_REWARDS_FUNDING_INSUFFICIENT"
    message = "The company's rewards account holds too little to pay this reward."


class RewardDeliveredAsVoucher(Conflict):
    code = "REFERRAL_REWARD_DELIVERED_AS_VOUCHER"
    message = "The reward is delivered as an assigned voucher: redeem the voucher."


class AssignedVoucherNotFound(NotFound):
    code = "REFERRAL_VOUCHER_NOT_FOUND"
    message = "No assigned voucher with that id for that user."


class AssignedVoucherExpired(Conflict):
    code = "REFERRAL_VOUCHER_EXPIRED"
    message = "The assigned voucher expired unredeemed."
