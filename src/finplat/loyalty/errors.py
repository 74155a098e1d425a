"""Loyalty's typed errors."""

from __future__ import annotations

from finplat.errors import ApiError, Conflict, NotFound


class ProgramNotFound(NotFound):
    code = "LOYALTY_PROGRAM_NOT_FOUND"
    message = "No loyalty programme with that id."


class MerchantNotFound(NotFound):
    code = "LOYALTY_MERCHANT_NOT_FOUND"
    message = "No loyalty merchant with that id."


class MidNotFound(NotFound):
    code = "LOYALTY_MID_NOT_FOUND"
    message = "No merchant id with that id on this merchant."


class ImportConfigNotFound(NotFound):
    code = "LOYALTY_IMPORT_CONFIG_NOT_FOUND"
    message = "No transaction import configuration with that id."


class MidInUse(Conflict):
    code = "LOYALTY_MID_IN_USE"
    message = "This MID already belongs to a merchant of the company."


class PointsRuleConflict(ApiError):
    status = 409
    code = "POINTS_RULE_CONFLICT"
    message = "The rate sent is not the one the programme's points rule uses: send PointsRule too."


class ProgramInactive(ApiError):
    status = 409
    code = "LOYALTY_PROGRAM_INACTIVE"
    message = "The loyalty programme is inactive: nothing new is assigned to it."


class NoMatchingMerchant(ApiError):
    status = 409
    code = "NO_MATCHING_MERCHANT"
    message = "The card transaction's MID matches no merchant: name the programme."


class AlreadyAssigned(ApiError):
    status = 409
    code = "ALREADY_ASSIGNED"
    message = "The card transaction is already assigned to another loyalty programme."


class InvalidImportFile(ApiError):
    status = 400
    code = "INVALID_IMPORT_FILE"
    message = "The file cannot be imported."
