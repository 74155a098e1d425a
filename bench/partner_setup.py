"""A benchmark's setup, done as a partner does it: companies from `finplat company create`,
everything else through the public API and the sandbox (KYC-approved users, active cards,
funded master accounts, open bank accounts with funded budgets, verified payees). Nothing
here is timed.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import io
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

import httpx
from pypdf import PdfWriter
from run_database import FINPLAT, ROOT

TIER = "Personal Premium"  # card-provider virtual cards and the banking provider
SETUP_CONCURRENCY = 8
VOUCHER_BATCH = 1000  # a company's vouchers issued per request (the settings' default)


@dataclass
class Company:
    company_id: int
    api_key: str
    cards: list[int] = field(default_factory=list)


def expect(response: httpx.Response, status: int) -> Any:
    if response.status_code != status:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: "
            f"{response.status_code} {response.text[:500]}"
        )
    return response.json() if response.content else None


def idempotency_key(what: str) -> dict[str, str]:
    return {"Idempotency-Key": f"bench-{what}-{secrets.token_hex(8)}"}


async def create_company(env: dict[str, str], name: str) -> Company:
    proc = await asyncio.create_subprocess_exec(
        FINPLAT, "company", "create", "--name", name, "--json",
        env=env, cwd=ROOT, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"finplat company create exited with {proc.returncode}")
    data = json.loads(out.decode().strip().splitlines()[-1])
    return Company(int(data["CompanyId"]), str(data["ApiKey"]))


async def fund_master(api: httpx.AsyncClient, amount: int, currency: str = "USD") -> None:
    body = {"Currency": currency, "Amount": amount}
    headers = idempotency_key("fund")
    expect(await api.post("/api/v2/sandbox/company/funding", json=body, headers=headers), 200)


async def tier_id(api: httpx.AsyncClient, name: str = TIER) -> int:
    tiers = expect(await api.get("/api/v2/tiers"), 200)["Tiers"]
    return int(next(t["Id"] for t in tiers if t["Name"] == name))


def user_body(n: int | str) -> dict[str, str]:
    return {
        "Email": f"bench{n}@example.com",
        "FirstName": "Ada",
        "LastName": "Lovelace",
        "Phone": "+447911123456",
        "ExternalUserId": f"bench_{n}",
        "AccountType": "personal",
        "DateOfBirth": "1990-05-17",
        "Address": "12 Analytical Row",
        "City": "London",
        "Country": "GB",
        "ZipCode": "N1 9GU",
    }


async def card_type_id(api: httpx.AsyncClient, user_id: int) -> int:
    """The tier's virtual card-provider card, which the user may order."""
    tier = expect(await api.get(f"/api/v2/users/{user_id}"), 200)["TierId"]
    products = expect(await api.get(f"/api/v2/tiers/card-tier/{tier}"), 200)["CardProducts"]
    return int(
        next(
            p["CardTypeId"]
            for p in products
            if p["Provider"] == "cardprov" and p["CardType"] == "VIRTUAL"
        )
    )


async def approved_user(api: httpx.AsyncClient, tier: int, n: int) -> int:
    """A user whose identity the sandbox approved, on `tier`."""
    user_id = int(expect(await api.post("/api/v2/users", json=user_body(n)), 201)["Id"])
    expect(await api.post(f"/api/v2/users/{user_id}/sumsub/kyc-url", json={}), 200)
    complete = f"/api/v2/sandbox/users/{user_id}/kyc/complete"
    expect(await api.post(complete, json={"Outcome": "APPROVED"}), 200)
    expect(await api.post(f"/api/v2/users/{user_id}/tier", json={"TierId": tier}), 200)
    return user_id


async def active_card(api: httpx.AsyncClient, user_id: int, type_id: int) -> int:
    """A virtual card ordered and produced (the sandbox's callback delivered at once)."""
    body = {"UserId": user_id, "CardTypeId": type_id, "Phone": "+447911123456"}
    headers = idempotency_key("order")
    card = expect(await api.post("/api/v2/cards", json=body, headers=headers), 201)
    path = f"/api/v2/sandbox/cards/{card['Id']}/callbacks"
    expect(await api.post(path, params={"userId": user_id}), 204)
    detail = expect(await api.get(f"/api/v2/cards/{card['Id']}", params={"userId": user_id}), 200)
    if detail["Status"] != "ACTIVE":
        raise RuntimeError(f"card {card['Id']} is {detail['Status']} after production")
    return int(card["Id"])


async def top_up(api: httpx.AsyncClient, card_id: int, value: int) -> None:
    body = {"CardId": card_id, "Token": "USD", "Value": value}
    headers = idempotency_key("topup")
    expect(await api.post("/api/v2/cards/topup", json=body, headers=headers), 200)


def proof_of_address() -> bytes:
    """A one-page PDF: the sandbox checks that it is one, not what it says."""
    writer = PdfWriter()
    writer.add_blank_page(width=100, height=50)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


async def open_bank_account(api: httpx.AsyncClient, user_id: int) -> str:
    """The banking provider's onboarding, approved in the sandbox: the `AccountId`."""
    fields = {
        "RequestedFeatures": "PAYMENTS",
        "MainPurpose": "Savings",
        "SourceOfFunds": "Salary",
        "DestinationOfFunds": "GB",
        "CurrenciesRequired": "GBP,EUR",
        "AnnualVolume": "10000-50000",
        "NumberOfPayments": "10-50",
        "ProofOfAddressDate": (dt.date.today() - dt.timedelta(days=10)).isoformat(),
    }
    files = {"ProofOfAddress": ("bill.pdf", proof_of_address(), "application/pdf")}
    answer = expect(
        await api.post(
            "/api/v2/banking/bankprov-onboarding",
            params={"userId": user_id},
            data=fields,
            files=files,
        ),
        202,
    )
    complete = f"/api/v2/sandbox/users/{user_id}/kyc/complete"
    expect(await api.post(complete, json={"Outcome": "APPROVED", "Provider": "bankprov"}), 200)
    return str(answer["AccountId"])


async def default_budget(api: httpx.AsyncClient, user_id: int) -> str:
    budgets = expect(await api.get(f"/api/v2/banking/users/{user_id}/budgets"), 200)["Budgets"]
    return str(next(b["BudgetId"] for b in budgets if b["IsDefault"]))


async def open_budget(api: httpx.AsyncClient, user_id: int, account_id: str, name: str) -> str:
    body = {"AccountId": account_id, "Name": name}
    path = f"/api/v2/banking/users/{user_id}/budgets"
    return str(
        expect(await api.post(path, json=body, headers=idempotency_key("budget")), 201)["BudgetId"]
    )


async def credit_budget(
    api: httpx.AsyncClient, user_id: int, budget_id: str, amount: int, currency: str = "EUR"
) -> None:
    """Money arriving from outside (sandbox: an incoming SEPA credit)."""
    body = {"Currency": currency, "Amount": amount, "Scheme": "SEPA", "SenderName": "Ada Lovelace"}
    path = f"/api/v2/sandbox/banking/budgets/{budget_id}/credits"
    expect(await api.post(path, params={"userId": user_id}, json=body), 201)


async def verified_payee(api: httpx.AsyncClient, user_id: int) -> str:
    """A SEPA EUR payee, confirmed with its one-time token: the `PayeeId`."""
    body = {
        "Name": "Acme GmbH",
        "PaymentType": "COMPANY",
        "PaymentMethod": "SEPA.CREDITTRANSFER",
        "Currency": "EUR",
        "Iban": "DE89370400440532013000",
    }
    params = {"userId": user_id}
    challenge = expect(
        await api.post(
            "/api/v2/banking/payees", params=params, json=body, headers=idempotency_key("payee")
        ),
        202,
    )
    token = {"VerificationToken": challenge["VerificationToken"]}
    path = f"/api/v2/banking/payees/{challenge['PayeeId']}/verify"
    expect(await api.post(path, params=params, json=token), 200)
    return str(challenge["PayeeId"])


async def active_mandate(api: httpx.AsyncClient, user_id: int, max_amount: int) -> str:
    """A monthly EUR mandate on the user's default budget, authorised in the sandbox: the
    `MandateId`."""
    body = {
        "UserId": user_id,
        "MaxAmount": max_amount,
        "Currency": "EUR",
        "Frequency": "MONTHLY",
        "Description": "Bench subscription",
        "ExternalReferenceId": f"bench-{user_id}",
    }
    headers = idempotency_key("mandate")
    created = expect(await api.post("/api/v2/payments/mandates", json=body, headers=headers), 201)
    path = f"/api/v2/sandbox/payments/mandates/{created['Id']}/authorisation"
    expect(await api.post(path, json={"Outcome": "APPROVED"}), 200)
    return str(created["Id"])


async def voucher_codes(api: httpx.AsyncClient, count: int, funding_usd: int) -> list[str]:
    """`count` vouchers of 1.00 USD without limits, in a group of their own, and the company's
    voucher funding account funded with `funding_usd`: their codes (shown this once)."""
    body = {"Currency": "USD", "Amount": funding_usd, "Account": "VOUCHERS"}
    headers = idempotency_key("fund-vouchers")
    expect(await api.post("/api/v2/sandbox/company/funding", json=body, headers=headers), 200)
    groups = "/api/v2/admin/vouchers/groups"
    group = expect(await api.post(groups, json={"Name": "Bench vouchers"}), 200)
    codes: list[str] = []
    while len(codes) < count:  # in batches the default MaximumBatchSize allows
        terms = {"Count": min(VOUCHER_BATCH, count - len(codes)), "Value": 1, "Currency": "USD"}
        path = f"{groups}/{group['Id']}/vouchers"
        issued = expect(await api.post(path, json=terms, headers=idempotency_key("vouchers")), 201)
        codes += [str(v["PlaintextCode"]) for v in issued["Vouchers"]]
    return codes


async def funded_payin_address(api: httpx.AsyncClient, user_id: int, usdc: int) -> str:
    """The user's USDC pay-in address on Ethereum, and `usdc` deposited to it with its
    chain's finality (sandbox): the address."""
    answer = expect(
        await api.post(
            "/api/v2/crypto-virtual-accounts/payin-address",
            params={"userId": user_id},
            json={"crypto_currency": "USDC", "chain_id": 1},
        ),
        200,
    )
    address = str(answer["Address"])
    body = {
        "Address": address,
        "Currency": "USDC",
        "ChainId": 1,
        "Amount": str(usdc),
        "Confirmations": 500,
    }
    expect(await api.post("/api/v2/sandbox/crypto/deposits", json=body), 201)
    return address


async def set_up_company(
    base_url: str,
    env: dict[str, str],
    name: str,
    n_cards: int,
    gate: asyncio.Semaphore,
    funding_usd: int,
) -> Company:
    """A company with its master account funded and `n_cards` KYC-approved users, each with an
    active virtual card."""
    async with gate:
        company = await create_company(env, name)
    headers = {"x-api-key": company.api_key}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=60) as api:
        await fund_master(api, funding_usd)
        tier = await tier_id(api)

        async def one(i: int) -> int:
            async with gate:
                user_id = await approved_user(api, tier, company.company_id * 100_000 + i)
                return await active_card(api, user_id, await card_type_id(api, user_id))

        company.cards = list(await asyncio.gather(*(one(i) for i in range(n_cards))))
    return company
