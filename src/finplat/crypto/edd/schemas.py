"""The spec's crypto EDD body (all required; `ProfessionalSalary` is `{AnnualAmount,
Currency, Employer?}`, DESIGN.md) and its answer."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from finplat.kit.fields import SafeText
from finplat.kit.money import CURRENCY_CODES, AmountRange, DecimalAmount
from finplat.kit.schemas import RequestModel, ResponseModel

Answer = Annotated[SafeText, Field(max_length=1000)]
# An https link written in printable ASCII (percent-encode anything else).
FileUrl = Annotated[str, Field(pattern=r"^https://[!-~]{1,2040}$", max_length=2048)]
MAX_SALARY = Decimal(10**12)


SalaryCurrency = StrEnum(  # type: ignore[misc]
    "SalaryCurrency", {code: code for code in CURRENCY_CODES}
)
"""An ISO 4217 currency code (or a stablecoin), in capitals."""


class ProfessionalSalary(RequestModel):
    AnnualAmount: Annotated[DecimalAmount, AmountRange(at_least=Decimal(0), at_most=MAX_SALARY)]
    Currency: Annotated[SalaryCurrency, Field(strict=False)]
    Employer: Annotated[SafeText, Field(max_length=200)] | None = None


class EddRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "CapitalOfCompany": "None",
                "GiftOrInheritance": "Inheritance from a grandparent, 2021",
                "ProfitFromSoldOrMaturingInvestments": "ETF sale, 2024",
                "ProfitsFromPropertySale": "None",
                "ProfitsFromSaleOfCompany": "None",
                "CompensationPayment": "None",
                "Pension": "None",
                "Other": "None",
                "ProfessionalSalary": {
                    "AnnualAmount": 85000,
                    "Currency": "EUR",
                    "Employer": "Analytical Engines Ltd",
                },
                "FileUrls": ["https://files.example.com/payslip.pdf"],
            }
        }
    )

    CapitalOfCompany: Answer
    GiftOrInheritance: Answer
    ProfitFromSoldOrMaturingInvestments: Answer
    ProfitsFromPropertySale: Answer
    ProfitsFromSaleOfCompany: Answer
    CompensationPayment: Answer
    Pension: Answer
    Other: Answer
    ProfessionalSalary: ProfessionalSalary
    FileUrls: list[FileUrl] = Field(max_length=20, description="https links to the evidence.")

    def provider_answers(self) -> dict[str, Any]:
        """The answers as the provider stores them (amounts as exact decimal text)."""
        answers = self.model_dump(mode="python")
        salary = answers["ProfessionalSalary"]
        salary["AnnualAmount"] = format(self.ProfessionalSalary.AnnualAmount, "f")
        salary["Currency"] = str(self.ProfessionalSalary.Currency)
        return answers


class EddResponse(ResponseModel):
    UserId: int
    Status: str = Field(description="`SUBMITTED`: stored with the verification provider.")
    SubmittedAt: datetime
