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


class VouchersShutDown(ApiError):
    status = 503
    code = "VOUCHERS_SHUT_DOWN"
    message = "Voucher redemptions are shut down for now (ShutdownMode)."
