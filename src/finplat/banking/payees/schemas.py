from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import ConfigDict, Field

from finplat.banking.payees import required_fields as catalogue
from finplat.banking.payees import verification
from finplat.banking.payees.models import Payee, PayeeStatus
from finplat.banking.payees.required_fields import (
    ACCOUNT_NUMBER_PATTERN,
    BANK_NAME_MAX,
    BIC_PATTERN,
    COMMENTS_MAX,
    IBAN_PATTERN,
    NAME_MAX,
    SORT_CODE_PATTERN,
    FieldSpec,
    schema_branches,
)
from finplat.banking.payees.service import Challenge, NewPayee, effective_status
from finplat.kit.fields import CountryCode, SafeText
from finplat.kit.pagination import Page
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.providers.names import BankProvider


class PayeeCreate(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Name": "Acme GmbH",
                "PaymentType": "COMPANY",
                "PaymentMethod": "SEPA.CREDITTRANSFER",
                "Currency": "EUR",
                "Iban": "DE89370400440532013000",
                "BankName": "Commerzbank",
            },
            # What each payment method carries and needs (see the required-fields form).
            "anyOf": schema_branches(),
        }
    )

    Name: Annotated[SafeText, Field(max_length=NAME_MAX)] = Field(
        description="The recipient's name as the bank holds it."
    )
    PaymentType: Annotated[catalogue.PaymentType, Field(strict=False)] = Field(
        description="A closed list (`COMPANY`, `INDIVIDUAL`): the banking provider registers "
        "the recipient as a business or a person, and checks the name against the account "
        "accordingly."
    )
    PaymentMethod: Annotated[catalogue.PaymentMethod, Field(strict=False)] = Field(
        description="A closed list, the banking provider's payment rails: SEPA.CREDITTRANSFER "
        "and SEPA.INSTANT carry EUR to an IBAN in the SEPA zone; FPS carries GBP to a UK "
        "account number and sort code; SWIFT carries EUR, GBP or USD to an IBAN or an account "
        "number at the bank named by Bic. The method decides the fields the payee needs."
    )
    Currency: Annotated[catalogue.PayeeCurrency, Field(strict=False)] = Field(
        description="A closed list (`EUR`, `GBP`, `USD`): the currencies a budget can pay out "
        "in, each carried by the methods above."
    )
    Iban: (
        Annotated[
            str,
            Field(
                pattern=IBAN_PATTERN,
                max_length=34,
                description="Capitals, no spaces. Its check digits and its country's format "
                "are verified (400 `INVALID_IBAN`); SEPA methods need a SEPA-zone country "
                "(400 `IBAN_NOT_SEPA`).",
                json_schema_extra={"format": "iban"},
            ),
        ]
        | None
    ) = None
    Bic: (
        Annotated[
            str,
            Field(
                pattern=BIC_PATTERN,
                description="8 or 11 characters; its country code must exist (400 `INVALID_BIC`).",
                json_schema_extra={"format": "bic"},
            ),
        ]
        | None
    ) = None
    BankName: Annotated[SafeText, Field(max_length=BANK_NAME_MAX)] | None = None
    Comments: Annotated[SafeText, Field(max_length=COMMENTS_MAX)] | None = None
    AccountNumber: (
        Annotated[
            str,
            Field(
                pattern=ACCOUNT_NUMBER_PATTERN,
                description="FPS: the UK account number (8 digits). SWIFT: the account number "
                "where the country has no IBAN.",
            ),
        ]
        | None
    ) = None
    SortCode: (
        Annotated[str, Field(pattern=SORT_CODE_PATTERN, description="FPS: 6 digits.")] | None
    ) = None
    BankCountry: CountryCode | None = None

    def to_new_payee(self) -> NewPayee:
        return NewPayee(
            name=self.Name,
            payment_type=self.PaymentType,
            payment_method=self.PaymentMethod,
            currency=self.Currency,
            iban=self.Iban,
            bic=self.Bic,
            bank_name=self.BankName,
            comments=self.Comments,
            account_number=self.AccountNumber,
            sort_code=self.SortCode,
            bank_country=self.BankCountry,
        )


class PayeeVerify(RequestModel):
    VerificationToken: Annotated[
        str,
        Field(
            pattern=verification.TOKEN_PATTERN,
            description="The one-time token of the payee's creation answer.",
        ),
    ]


class PayeeChallengeResponse(ResponseModel):
    """The creation answer: the one-time verification token, shown only here."""

    Success: bool
    PayeeId: str = Field(description="Pass it back exactly where a `PayeeId` is asked for.")
    Status: PayeeStatus
    VerificationToken: str = Field(
        description="One-time token to confirm the payee with, before `ExpiresAt`. Deliver it "
        "to the user through your own channel; it is never shown again."
    )
    Message: str
    ExpiresAt: datetime
    RecipientName: str
    AccountNumberLast4: str = Field(description="Last four characters of the account number.")

    @classmethod
    def of(cls, challenge: Challenge) -> PayeeChallengeResponse:
        payee = challenge.payee
        return cls(
            Success=True,
            PayeeId=payee.id,
            Status=PayeeStatus(payee.status),
            VerificationToken=challenge.token,
            Message="Confirm the payee with its verification token before it expires.",
            ExpiresAt=payee.token_expires_at,
            RecipientName=payee.name,
            AccountNumberLast4=payee.account_number_last4,
        )


class PayeeResponse(ResponseModel):
    PayeeId: str = Field(description="Pass it back exactly where a `PayeeId` is asked for.")
    UserId: int
    Provider: BankProvider
    Status: PayeeStatus = Field(
        description="`PENDING_VERIFICATION` until the token is confirmed, then `ACTIVE` (usable "
        "for payouts); `VERIFICATION_FAILED` after 5 wrong tokens; `EXPIRED` when the token "
        "ran out; `DELETED` once deleted."
    )
    Name: str
    RecipientName: str
    PaymentType: catalogue.PaymentType
    PaymentMethod: catalogue.PaymentMethod
    Currency: catalogue.PayeeCurrency
    AccountNumberLast4: str = Field(description="Last four characters of the account number.")
    Bic: str | None
    BankName: str | None
    BankCountry: str | None
    Comments: str | None
    ExpiresAt: datetime | None = Field(
        description="While pending: when the verification token expires."
    )
    VerifiedAt: datetime | None
    CreatedAt: datetime

    @classmethod
    def of(cls, payee: Payee) -> PayeeResponse:
        status = effective_status(payee)
        return cls(
            PayeeId=payee.id,
            UserId=payee.user_id,
            Provider=BankProvider(payee.provider),
            Status=status,
            Name=payee.name,
            RecipientName=payee.name,
            PaymentType=catalogue.PaymentType(payee.payment_type),
            PaymentMethod=catalogue.PaymentMethod(payee.payment_method),
            Currency=catalogue.PayeeCurrency(payee.currency),
            AccountNumberLast4=payee.account_number_last4,
            Bic=payee.bic,
            BankName=payee.bank_name,
            BankCountry=payee.bank_country,
            Comments=payee.comments,
            ExpiresAt=(
                payee.token_expires_at if status is PayeeStatus.PENDING_VERIFICATION else None
            ),
            VerifiedAt=payee.verified_at,
            CreatedAt=payee.created_at,
        )


class PayeePage(Page[PayeeResponse]):
    """A page of payees, newest first."""


class FieldResponse(ResponseModel):
    Name: str
    Required: bool
    Description: str
    Pattern: str | None = None
    MaxLength: int | None = None

    @classmethod
    def of(cls, spec: FieldSpec) -> FieldResponse:
        return cls(
            Name=spec.name,
            Required=spec.required,
            Description=spec.description,
            Pattern=spec.pattern,
            MaxLength=spec.max_length,
        )


class RequiredFieldsResponse(ResponseModel):
    PaymentType: catalogue.PaymentType
    PaymentMethod: catalogue.PaymentMethod
    Currency: catalogue.PayeeCurrency
    Supported: bool = Field(
        description="Whether the method carries the currency; when false, `Fields` is empty."
    )
    Fields: list[FieldResponse]
