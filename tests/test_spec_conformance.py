"""A client written strictly from the spec is served (issue 29; DESIGN.md, "Request binding").

Every endpoint of the spec's first half (users, KYC, onboarding, business, cards, banking,
payees, FX, payouts, transfers, transactions) is called once, with a body built only from the
spec's field lists: its PascalCase, its own spellings (`accountId` on the order routes,
`enabled` on auto-lock, `externalReferenceId` on user-to-master transfers), its types (amounts
as numbers, the onboarding form's twelve fields). Where the spec leaves a body unspecified, the
document's shape is sent. No answer may be a 400 for the request's shape or a 5xx; the answer
each call gets is stated, business refusals (404, 409) included, so that the fixtures are seen
to reach what they call. The calls that only prepare state (the sandbox's KYC decisions, card
production and credits, the payee and payout verifications) go through the test steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from finplat.http.rate_limit import ApiKeyRateLimiter
from tests.banking.payees.steps import confirm
from tests.banking.payouts.steps import verify as verify_payout
from tests.banking.steps import credit, default_budget
from tests.bankprov_onboarding.steps import onboarding_fields
from tests.cards.steps import deliver_callbacks
from tests.documents import samples
from tests.onboarding import decide

# A 400 about the request's shape, which a client following the spec must never get.
SHAPE_CODES = {"VALIDATION_ERROR", "DUPLICATE_FIELD", "MALFORMED_JSON", "MALFORMED_MULTIPART"}


@pytest.fixture(autouse=True)
def _unthrottled(app: FastAPI) -> None:
    app.state.rate_limiter = ApiKeyRateLimiter("100000/second")


@dataclass
class SpecClient:
    """Calls the API and keeps every answer that differs from the one expected."""

    api: httpx.AsyncClient
    problems: list[str] = field(default_factory=list)
    calls: int = 0
    keys: int = 0

    def key(self) -> dict[str, str]:
        self.keys += 1
        return {"Idempotency-Key": f"spec-client-{self.keys}"}

    async def call(self, expected: int, method: str, path: str, **options: Any) -> Any:
        self.calls += 1
        response = await self.api.request(method, path, **options)
        body = response.json() if response.content else None
        code = body.get("Code") if isinstance(body, dict) else None
        if (response.status_code == 400 and code in SHAPE_CODES) or response.status_code >= 500:
            self.problems.append(f"{method} {path}: refused as malformed: {response.text}")
        elif response.status_code != expected:
            self.problems.append(
                f"{method} {path}: {response.status_code} {code}, expected {expected}"
            )
        return body


def user_fields(account_type: str, n: int) -> dict[str, Any]:
    """The spec's user creation fields, every one of them."""
    return {
        "Email": f"spec{n}@example.com",
        "FirstName": "Ada",
        "LastName": "Lovelace",
        "Phone": "+447911123456",
        "ExternalUserId": f"spec-client-{n}",
        "AccountType": account_type,
        "DateOfBirth": "1990-05-17",
        "Address": "12 Analytical Row",
        "City": "London",
        "Country": "GB",
        "ZipCode": "N1 9GU",
    }


def spec_onboarding_form() -> list[tuple[str, Any]]:
    """The spec's twelve personal onboarding fields, and nothing else."""
    fields = onboarding_fields(ProofOfAddressDate=...)
    text = [
        (name, (None, value))
        for name, values in fields.items()
        for value in (values if isinstance(values, list) else [values])
    ]
    return [*text, ("ProofOfAddress", ("bill.pdf", samples.pdf(), "application/pdf"))]


async def users_kyc_and_onboarding(client: SpecClient) -> dict[str, Any]:
    """A personal user through KYC, the tier with every provider, and the banking provider's
    onboarding; returns the user with its banking ids."""
    tiers = (await client.call(200, "GET", "/api/v2/tiers"))["Tiers"]
    premium = next(t for t in tiers if t["Name"] == "Personal Premium")
    user = await client.call(201, "POST", "/api/v2/users", json=user_fields("personal", 1))
    uid = user["Id"]
    kyc = {
        "Occupation": "Engineer",
        "AnnualSalary": "50000-100000",
        "AccountPurpose": "Everyday spending",
        "ExpectedMonthlyVolume": "1000-5000",
        "DocumentIssueDate": "2020-01-15",
        "IpAddress": "203.0.113.7",
    }
    await client.call(200, "POST", f"/api/v2/users/{uid}/sumsub/kyc-url", json=kyc)
    await decide(client.api, uid, "APPROVED")
    # "Tier selection; body unspecified": DESIGN.md names it `{TierId}`.
    await client.call(200, "POST", f"/api/v2/users/{uid}/tier", json={"TierId": premium["Id"]})
    await client.call(200, "GET", f"/api/v2/users/{uid}/kyc/detailed-status")
    await client.call(200, "POST", f"/api/v2/users/create-cardprov-account/{uid}")
    await client.call(
        202,
        "POST",
        "/api/v2/banking/bankprov-onboarding",
        params={"userId": uid},
        files=spec_onboarding_form(),
    )
    await client.call(
        200,
        "POST",
        f"/api/v2/users/{uid}/kyc/bankprov/documents",
        files=[("Files", ("id.pdf", samples.pdf(), "application/pdf"))],
    )
    # "Body fields unspecified": the document's answers to requests; none is outstanding.
    await client.call(
        404,
        "POST",
        f"/api/v2/users/{uid}/kyc/bankprov/information",
        json={"Answers": [{"RequestId": "bp_irq_0", "Answer": "Salary"}]},
    )
    await decide(client.api, uid, "APPROVED", provider="bankprov")
    return {**user, "TierId": premium["Id"]}


async def discovery(client: SpecClient, user: dict[str, Any]) -> dict[str, Any]:
    uid = user["Id"]
    await client.call(200, "GET", "/api/v2/banking/providers", params={"userId": uid})
    accounts = await client.call(200, "GET", "/api/v2/banking/accounts", params={"userId": uid})
    await client.call(200, "GET", "/api/v2/banking/balance", params={"userId": uid})
    await client.call(200, "GET", f"/api/v2/banking/users/{uid}/budgets")
    await client.call(200, "GET", f"/api/v2/banking/users/{uid}/bankprov-banking-info")
    await client.call(200, "GET", f"/api/v2/users/{uid}/assets")
    budget = await default_budget(client.api, uid)
    await credit(client.api, uid, budget["BudgetId"], "1000.00", "EUR")
    account_id = next(a for a in accounts["Accounts"] if a["Provider"] == "bankprov")["AccountId"]
    return {**user, "AccountId": account_id, "BudgetId": budget["BudgetId"]}


async def payees_fx_payouts_transfers(client: SpecClient, user: dict[str, Any]) -> None:
    uid, account, budget = user["Id"], user["AccountId"], user["BudgetId"]
    await client.call(
        200,
        "GET",
        "/api/v2/banking/payees/required-fields",
        params={
            "userId": uid,
            "paymentType": "COMPANY",
            "paymentMethod": "SEPA.CREDITTRANSFER",
            "currency": "EUR",
        },
    )
    payee = {
        "Name": "Acme GmbH",
        "PaymentType": "COMPANY",
        "PaymentMethod": "SEPA.CREDITTRANSFER",
        "Currency": "EUR",
        "Iban": "DE89370400440532013000",
        "Bic": "COBADEFFXXX",
        "BankName": "Commerzbank",
        "Comments": "Supplier",
    }
    challenge = await client.call(
        202,
        "POST",
        "/api/v2/banking/payees",
        params={"userId": uid},
        json=payee,
        headers=client.key(),
    )
    await confirm(client.api, user, challenge["PayeeId"], challenge["VerificationToken"])

    # Quotes: "quote request" is not shown; the document's fields. No `userId` required.
    quote = {"AccountId": account, "SellCurrency": "EUR", "BuyCurrency": "USD", "Amount": 100}
    quote["FixedSide"] = "SELL"
    quoted = await client.call(200, "POST", "/api/v2/banking/quotations", json=quote)
    await client.call(
        201,
        "POST",
        "/api/v2/banking/trades/execute",
        params={"userId": uid},
        json={"QuoteId": quoted["QuoteId"], "AccountId": account},
        headers=client.key(),
    )
    # The order routes, with the spec's `accountId`.
    order = {**{k: v for k, v in quote.items() if k != "AccountId"}, "accountId": account}
    ordered = await client.call(200, "POST", "/api/v2/banking/orders/quote", json=order)
    await client.call(
        201,
        "POST",
        "/api/v2/banking/orders/trade",
        json={"QuoteId": ordered["QuoteId"], "accountId": account},
    )

    # Payouts: "payout body" with the optional `FromCurrency`; no `userId` required.
    terms = {
        "AccountId": account,
        "BudgetId": budget,
        "PayeeId": challenge["PayeeId"],
        "Amount": 120.5,
        "Currency": "EUR",
        "FromCurrency": "EUR",
    }
    approval = await client.call(
        201, "POST", "/api/v2/banking/payouts/initiate", json=terms, headers=client.key()
    )
    await verify_payout(client.api, user, approval["ApprovalId"], approval["VerificationToken"])
    payout = await client.call(
        201,
        "POST",
        "/api/v2/banking/payouts",
        json={**terms, "ApprovalId": approval["ApprovalId"]},
        headers=client.key(),
    )

    # A user-to-master transfer, retried by the spec's `externalReferenceId`.
    transfer = {
        "AccountId": account,
        "Amount": 10,
        "Currency": "EUR",
        "ToMaster": True,
        "externalReferenceId": "spec-transfer-1",
    }
    await client.call(
        201,
        "POST",
        f"/api/v2/banking/budgets/{budget}/transfer",
        params={"userId": uid},
        json=transfer,
    )

    await client.call(200, "GET", f"/api/v2/transactions/{payout['TransactionId']}")
    await client.call(
        200,
        "GET",
        "/api/v2/transactions",
        params={"userId": uid, "types": "PAYOUT", "statuses": "PENDING"},
    )
    # Pending at the provider: the spec's 400 for a provider's refusal to confirm.
    await client.call(
        400, "GET", f"/api/v2/transactions/{payout['TransactionId']}/bankprov/payment-confirmation"
    )


async def product(client: SpecClient, tier_id: int, provider: str, card_type: str) -> int:
    tier = await client.call(200, "GET", f"/api/v2/tiers/card-tier/{tier_id}")
    return int(
        next(
            p["CardTypeId"]
            for p in tier["CardProducts"]
            if p["Provider"] == provider and p["CardType"] == card_type
        )
    )


async def cards(client: SpecClient, user: dict[str, Any]) -> None:
    uid = user["Id"]
    query = {"userId": uid}
    await client.call(
        200, "POST", "/api/v2/sandbox/company/funding", json={"Currency": "USD", "Amount": 5000}
    )
    virtual = await product(client, user["TierId"], "cardprov", "VIRTUAL")
    order = {
        "UserId": uid,
        "CardTypeId": virtual,
        "Phone": "+447911123456",
        "ExternalCardId": "spec-card-1",
        "Currency": "USD",
        "CardName": "Travel",
        "AutoLockEnabled": False,
    }
    card = await client.call(201, "POST", "/api/v2/cards", json=order, headers=client.key())
    await deliver_callbacks(client.api, card)
    cid = card["Id"]
    await client.call(200, "GET", "/api/v2/cards", params=query)
    await client.call(200, "GET", f"/api/v2/cards/{cid}", params=query)
    topup = {"CardId": cid, "Token": "USD", "Value": 100}
    await client.call(200, "POST", "/api/v2/cards/topup", json=topup, headers=client.key())
    unload = {"CardId": cid, "Currency": "USD", "Value": 10}
    await client.call(200, "POST", "/api/v2/cards/unload-card", json=unload, headers=client.key())
    await client.call(200, "POST", f"/api/v2/cards/{cid}/freeze", params=query)
    await client.call(200, "POST", f"/api/v2/cards/{cid}/enable", params=query)
    await client.call(
        200, "PUT", f"/api/v2/cards/{cid}/auto-lock", params=query, json={"enabled": True}
    )
    await client.call(200, "POST", f"/api/v2/cards/{cid}/auto-lock/enable", params=query)
    await client.call(200, "POST", f"/api/v2/cards/{cid}/auto-lock/disable", params=query)
    await client.call(200, "POST", f"/api/v2/cards/{cid}/pin", params=query, json={"Pin": "480273"})
    await client.call(200, "GET", f"/api/v2/cards/{cid}/widget", params=query)
    # "Request bodies of the three auto top-up setting operations: not shown."
    rule = {"CardId": cid, "Enabled": True, "Amount": 20, "MonthlyLimit": 100}
    await client.call(
        200,
        "POST",
        "/api/v2/cards/auto-topup/low-balance",
        params=query,
        json={**rule, "Threshold": 10},
    )
    await client.call(200, "POST", "/api/v2/cards/auto-topup/failed-tx", params=query, json=rule)
    await client.call(
        200,
        "POST",
        "/api/v2/cards/auto-topup/deposit",
        params=query,
        json={**rule, "Currency": "USDC"},
    )
    await client.call(200, "GET", f"/api/v2/cards/{cid}/auto-topup", params=query)

    physical = await product(client, user["TierId"], "cardprov", "PHYSICAL")
    await client.call(
        200,
        "GET",
        "/api/v2/cards/physical-card-fees",
        params={"userId": uid, "country": "GB", "cardTypeId": physical},
    )
    # "DeliveryAddress: object, must be complete"; the design's field name is unspecified.
    address = {
        "Name": "Ada Lovelace",
        "Line1": "12 St James's Square",
        "City": "London",
        "PostalCode": "SW1Y 4JH",
        "Country": "GB",
    }
    plastic = await client.call(
        201,
        "POST",
        "/api/v2/cards",
        json={
            "UserId": uid,
            "CardTypeId": physical,
            "Phone": "+447911123456",
            "DeliveryAddress": address,
            "DesignId": "classic",
        },
        headers=client.key(),
    )
    pid = plastic["Id"]
    await client.call(200, "GET", f"/api/v2/cards/{pid}/bulk-ship/quote", params=query)
    await client.call(200, "POST", f"/api/v2/cards/{pid}/bulk-ship", params=query)
    # Not delivered yet: the card is not produced, so it cannot be activated.
    await client.call(409, "POST", f"/api/v2/cards/{pid}/activate", params=query)

    banking_virtual = await product(client, user["TierId"], "bankprov", "VIRTUAL")
    await client.call(
        201,
        "POST",
        "/api/v2/cards",
        json={
            "UserId": uid,
            "CardTypeId": banking_virtual,
            "Phone": "+447911123456",
            "BudgetId": user["BudgetId"],
        },
        headers=client.key(),
    )
    await client.call(200, "DELETE", f"/api/v2/cards/{cid}", params=query)


async def business(client: SpecClient) -> None:
    user = await client.call(201, "POST", "/api/v2/users", json=user_fields("business", 2))
    uid = user["Id"]
    await client.call(200, "POST", f"/api/v2/users/{uid}/sumsub/kyc-url", json={})
    await decide(client.api, uid, "APPROVED")
    query = {"userId": uid}
    application = {
        "Market": "UK",
        "BusinessType": "Private limited company",
        "CountryOfIncorporation": "GB",
        "RegisteredName": "Analytical Engines Ltd",
        "RegistrationNumber": "09876543",
        "BusinessOverview": "Design and sale of calculating machines.",
        "IndustryMain": "Manufacturing",
        "IndustrySub": "Office machinery",
        "EmployeeCount": 12,
        "IncorporationDate": "2015-03-02",
        "Website": "https://example.com",
    }
    await client.call(
        200, "POST", "/api/v2/business/onboarding/application", params=query, json=application
    )
    # The address and compliance objects' structure is not shown: the document's.
    compliance = {
        "BusinessType": "Private limited company",
        "IndustryMain": "Manufacturing",
        "IndustrySub": "Office machinery",
        "Country": "GB",
        "Region": "London",
        "Website": "https://example.com",
        "PromotionDescription": "Trade fairs",
        "TaxId": "GB123456789",
        "IncorporationDate": "2015-03-02T00:00:00Z",
        "Addresses": [
            {
                "Type": "REGISTERED",
                "AddressLine1": "12 Analytical Row",
                "City": "London",
                "Country": "GB",
            }
        ],
        "PaymentCountries": ["GB", "FR"],
        "Compliance": {"SourceOfFunds": "Trading revenue"},
    }
    await client.call(
        200,
        "POST",
        "/api/v2/business/onboarding/compliance/requirements",
        params=query,
        json=compliance,
    )
    person = {
        "FirstName": "Charles",
        "LastName": "Babbage",
        "Email": "charles@example.com",
        "Role": "DIRECTOR",
        "DateOfBirth": "1971-12-26",
        "Nationality": "GB",
    }
    added = await client.call(
        201, "POST", "/api/v2/business/onboarding/associated-people", params=query, json=person
    )
    document = ("File", ("document.pdf", samples.pdf(), "application/pdf"))
    await client.call(
        201,
        "POST",
        "/api/v2/business/onboarding/application/documents",
        params=query,
        files=[("DocumentType", (None, "CERTIFICATE_OF_INCORPORATION")), document],
    )
    await client.call(
        201,
        "POST",
        f"/api/v2/business/onboarding/associated-people/{added['Id']}/documents",
        params=query,
        files=[("DocumentType", (None, "PASSPORT")), document],
    )
    await client.call(200, "POST", "/api/v2/business/onboarding/application/submit", params=query)


async def test_a_client_written_from_the_spec_is_served_on_every_first_half_endpoint(
    api: httpx.AsyncClient,
) -> None:
    client = SpecClient(api)
    user = await users_kyc_and_onboarding(client)
    user = await discovery(client, user)
    await payees_fx_payouts_transfers(client, user)
    await cards(client, user)
    await business(client)
    assert client.problems == []
    assert client.calls >= 60, client.calls
