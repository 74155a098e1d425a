"""The errors of the voucher domain, one class per code a client can tell apart."""

from __future__ import annotations

from finplat.errors import ApiError, Conflict, NotFound, ValidationFailed


class VoucherGroupNotFound(NotFound):
    code = "VOUCHER_GROUP_NOT_FOUND"
    message = "No voucher group with that id."


class VoucherNotFound(NotFound):
    code = "VOUCHER_NOT_FOUND"
    message = "No voucher with that code."


class BatchTooLarge(ValidationFailed):
    code = "BATCH_TOO_LARGE"
    message = "More vouchers than one request may issue (MaximumBatchSize)."


class VoucherTermsInvalid(ValidationFailed):
    code = "INVALID_VOUCHER_TERMS"
    message = "The voucher's terms are not valid."


class VouchersDisabled(Conflict):
    code = "VOUCHERS_DISABLED"
    message = "Vouchers are not enabled for this company (see the voucher settings)."


class VouchersShutDown(Conflict):
    code = "VOUCHERS_SHUT_DOWN"
    message = "Voucher redemptions are shut down for now (ShutdownMode)."


class RedemptionNotFound(NotFound):
    code = "REDEMPTION_NOT_FOUND"
    message = "No voucher redemption with that id."


class VoucherExpired(Conflict):
    code = "VOUCHER_EXPIRED"
    message = "The voucher's validity ended."


class VoucherNotYetValid(Conflict):
    code = "VOUCHER_NOT_YET_VALID"
    message = "The voucher's validity has not started."


class VoucherExhausted(Conflict):
    code = "VOUCHER_EXHAUSTED"
    message = "The voucher has no uses or value left."


class VoucherUseLimitReached(Conflict):
    code = "VOUCHER_USE_LIMIT_REACHED"
    message = "The voucher's uses are all taken (by completed or started redemptions)."


class VoucherValueCapReached(Conflict):
    code = "VOUCHER_VALUE_CAP_REACHED"
    message = "The voucher's aggregate value cap leaves no room for another redemption."


class VoucherPerUserLimitReached(Conflict):
    code = "VOUCHER_PER_USER_LIMIT_REACHED"
    message = "The user has redeemed this voucher as often as it allows."


class VoucherCurrencyMismatch(Conflict):
    code = "VOUCHER_CURRENCY_MISMATCH"
    message = "The card holds another currency than the voucher's."


class InvalidVerificationCode(ApiError):
    status = 403
    code = "INVALID_VERIFICATION_CODE"
    message = "The code is not the one sent for this redemption."


class RedemptionLocked(Conflict):
    code = "REDEMPTION_LOCKED"
    message = "Too many wrong codes: the redemption failed and its reservation was released."


class VerificationExpired(Conflict):
    code = "VERIFICATION_EXPIRED"
    message = "The code expired: the redemption expired and its reservation was released."


class RedemptionNotVerifiable(Conflict):
    code = "REDEMPTION_NOT_AWAITING_VERIFICATION"
    message = "The redemption is not waiting for a code."


class RedemptionNotAwaitingApproval(Conflict):
    code = "REDEMPTION_NOT_AWAITING_APPROVAL"
    message = "The redemption is not waiting for the company's approval."


class VoucherFundingShort(Conflict):
    """The company's voucher funding account cannot pay the voucher's value."""

    code = "VOUCHER_FUNDING_INSUFFICIENT"
    message = (
        "The company's voucher funding account does not have enough available funds; fund it "
        "(sandbox: POST /api/v2/sandbox/company/funding with Account VOUCHERS) and verify again."
    )
