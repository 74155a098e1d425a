"""The operations of the whole-API benchmark (`bench/api.py`), each as a partner's backend
sends it, on one of the customers the setup prepared (`Customer`).

Each is a `load.Operation`: it succeeds when every request gets the status the API promises
(and a purchase is approved); anything else is a `Failure`. Every state-changing request that
takes an `Idempotency-Key` gets a fresh one, as the README asks of a partner.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from http1 import Connection
from load import Client, Failure, Operation, expect
from partner_setup import user_body

from finplat.providers import inbound

PAYOUTS = "/api/v2/banking/payouts"
# The card provider's callback secret the bench's server is started with.
PROVIDER_SECRET = "bench-provider-callback-secret"  # noqa: S105


@dataclass(frozen=True)
class Customer:
    """A KYC-approved user with an active funded card and an open bank account: a funded
    budget, a second budget of the same account and a verified SEPA EUR payee."""

    api_key: str
    user_id: int
    card_type_id: int
    card_id: int
    account_id: str
    budget_id: str
    savings_id: str
    payee_id: str
    # The company's id and the card's id at the card provider: what the provider's real-time
    # request names (read from the database after the setup).
    company_id: int = 0
    card_ref: str = ""
    # An active mandate on the funded budget, its allowance far above what a run collects.
    mandate_id: str = ""
    # A voucher of the customer's own, without limits (each redemption credits its card).
    voucher_code: str = ""
    # The customer's USDC pay-in address on Ethereum; their crypto balance is funded.
    payin_address: str = ""


def _cents(client: Client, low: int, high: int) -> float:
    """An amount from `low` to `high` - 0.01 with two decimals (as JSON numbers are sent)."""
    return client.rng.randrange(low * 100, high * 100) / 100


async def get_user(conn: Connection, c: Customer, client: Client) -> Failure | None:
    failure, _ = await expect(conn, 200, "GET", f"/api/v2/users/{c.user_id}", api_key=c.api_key)
    return failure


async def list_cards(conn: Connection, c: Customer, client: Client) -> Failure | None:
    path = f"/api/v2/cards?userId={c.user_id}"
    failure, _ = await expect(conn, 200, "GET", path, api_key=c.api_key)
    return failure


async def get_balance(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """The user's balance per currency across providers (budgets and cards)."""
    path = f"/api/v2/banking/balance?userId={c.user_id}"
    failure, _ = await expect(conn, 200, "GET", path, api_key=c.api_key)
    return failure


async def create_user(conn: Connection, c: Customer, client: Client) -> Failure | None:
    body = user_body(client.next_id())
    failure, _ = await expect(conn, 201, "POST", "/api/v2/users", api_key=c.api_key, body=body)
    return failure


async def order_card(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """Another virtual card for the user (it becomes active when the provider's callback
    arrives, in the background)."""
    body = {"UserId": c.user_id, "CardTypeId": c.card_type_id, "Phone": "+447911123456"}
    failure, _ = await expect(
        conn,
        201,
        "POST",
        "/api/v2/cards",
        api_key=c.api_key,
        body=body,
        idempotency_key=client.next_key(),
    )
    return failure


async def topup(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """5.00 to 199.99 USD from the master account onto the card."""
    body = {"CardId": c.card_id, "Token": "USD", "Value": _cents(client, 5, 200)}
    failure, _ = await expect(
        conn,
        200,
        "POST",
        "/api/v2/cards/topup",
        api_key=c.api_key,
        body=body,
        idempotency_key=client.next_key(),
    )
    return failure


async def unload(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """1.00 to 19.99 USD from the card back to the master account."""
    body = {"CardId": c.card_id, "Currency": "USD", "Value": _cents(client, 1, 20)}
    failure, _ = await expect(
        conn,
        200,
        "POST",
        "/api/v2/cards/unload-card",
        api_key=c.api_key,
        body=body,
        idempotency_key=client.next_key(),
    )
    return failure


async def company_funding(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """100.00 to 9999.99 USD into the company's master account (sandbox)."""
    body = {"Currency": "USD", "Amount": _cents(client, 100, 10_000)}
    failure, _ = await expect(
        conn,
        200,
        "POST",
        "/api/v2/sandbox/company/funding",
        api_key=c.api_key,
        body=body,
        idempotency_key=client.next_key(),
    )
    return failure


async def budget_transfer(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """1.00 to 9.99 EUR from the funded budget to the other budget of the account."""
    body = {
        "AccountId": c.account_id,
        "Amount": _cents(client, 1, 10),
        "Currency": "EUR",
        "DestinationBudgetId": c.savings_id,
    }
    failure, _ = await expect(
        conn,
        201,
        "POST",
        f"/api/v2/banking/budgets/{c.budget_id}/transfer?userId={c.user_id}",
        api_key=c.api_key,
        body=body,
        idempotency_key=client.next_key(),
    )
    return failure


async def payout_create(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """The whole payout flow, as a partner runs it for each payout: check (the quote), initiate
    (the approval and its one-time token), the user's verification, then the create, which
    reserves the money and asks the banking provider to pay (1.00 to 9.99 EUR)."""
    terms = {
        "AccountId": c.account_id,
        "BudgetId": c.budget_id,
        "PayeeId": c.payee_id,
        "Amount": _cents(client, 1, 10),
        "Currency": "EUR",
    }
    user = f"?userId={c.user_id}"
    failure, _ = await expect(
        conn, 200, "POST", f"{PAYOUTS}/check{user}", api_key=c.api_key, body=terms, step="check"
    )
    if failure is not None:
        return failure
    failure, answer = await expect(
        conn,
        201,
        "POST",
        f"{PAYOUTS}/initiate{user}",
        api_key=c.api_key,
        body=terms,
        idempotency_key=client.next_key(),
        step="initiate",
    )
    if failure is not None:
        return failure
    challenge = json.loads(answer)
    approval = challenge["ApprovalId"]
    failure, _ = await expect(
        conn,
        200,
        "POST",
        f"{PAYOUTS}/approvals/{approval}/verify{user}",
        api_key=c.api_key,
        body={"VerificationToken": challenge["VerificationToken"]},
        step="verify",
    )
    if failure is not None:
        return failure
    failure, _ = await expect(
        conn,
        201,
        "POST",
        f"{PAYOUTS}{user}",
        api_key=c.api_key,
        body={**terms, "ApprovalId": approval},
        idempotency_key=client.next_key(),
        step="create",
    )
    return failure


async def fx_trade(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """The partner's FX flow: a quote selling 1.00 to 9.99 EUR of the funded budget for USD,
    then its execution, which moves both currencies of the budget."""
    user = f"?userId={c.user_id}"
    terms = {
        "AccountId": c.account_id,
        "SellCurrency": "EUR",
        "BuyCurrency": "USD",
        "Amount": _cents(client, 1, 10),
        "FixedSide": "SELL",
    }
    failure, answer = await expect(
        conn,
        200,
        "POST",
        f"/api/v2/banking/quotations{user}",
        api_key=c.api_key,
        body=terms,
        step="quote",
    )
    if failure is not None:
        return failure
    quote = json.loads(answer)
    if quote["IsAvailable"] is not True:
        return Failure("quote unavailable", 200, answer[:300].decode(errors="replace"))
    failure, _ = await expect(
        conn,
        201,
        "POST",
        f"/api/v2/banking/trades/execute{user}",
        api_key=c.api_key,
        body={"QuoteId": quote["QuoteId"], "AccountId": c.account_id},
        idempotency_key=client.next_key(),
        step="execute",
    )
    return failure


async def payment_request(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """A payment request of 1.00 to 99.99 EUR into the user's default budget, then its payer
    paying it (sandbox: the provider's notification posts it and marks it `PAID`)."""
    failure, answer = await expect(
        conn,
        201,
        "POST",
        f"/api/v2/payments/requests?userId={c.user_id}",
        api_key=c.api_key,
        body={"Amount": _cents(client, 1, 100), "Currency": "EUR", "Description": "Dinner"},
        idempotency_key=client.next_key(),
        step="request",
    )
    if failure is not None:
        return failure
    request_id = json.loads(answer)["Id"]
    failure, answer = await expect(
        conn,
        200,
        "POST",
        f"/api/v2/sandbox/payments/requests/{request_id}/pay",
        api_key=c.api_key,
        body={"PayerName": "Ada Lovelace"},
        step="pay",
    )
    if failure is None and json.loads(answer)["Status"] != "PAID":
        return Failure("not paid", 200, answer[:300].decode(errors="replace"))
    return failure


async def collection(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """A collection of 1.00 to 9.99 EUR under the customer's active mandate, from the funded
    budget into the company's master account; it must complete."""
    body = {
        "MandateId": c.mandate_id,
        "Amount": _cents(client, 1, 10),
        "Currency": "EUR",
        "merchantReferenceId": f"bench-{client.next_id()}",
    }
    failure, answer = await expect(
        conn,
        201,
        "POST",
        "/api/v2/payments/collections",
        api_key=c.api_key,
        body=body,
        idempotency_key=client.next_key(),
    )
    if failure is None and json.loads(answer)["Status"] != "COMPLETED":
        return Failure("not completed", 201, answer[:300].decode(errors="replace"))
    return failure


async def voucher_redemption(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """A redemption of the customer's voucher (1.00 USD) onto their card, as a partner runs
    it: the start, the one-time code the user received (read from the sandbox), the
    verification, which credits the card from the company's voucher funding."""
    failure, answer = await expect(
        conn,
        201,
        "POST",
        "/api/v2/vouchers/redemptions",
        api_key=c.api_key,
        body={"VoucherCode": c.voucher_code, "UserId": c.user_id, "CardId": c.card_id},
        idempotency_key=client.next_key(),
        step="start",
    )
    if failure is not None:
        return failure
    redemption = json.loads(answer)["Id"]
    failure, answer = await expect(
        conn,
        200,
        "GET",
        f"/api/v2/sandbox/vouchers/redemptions/{redemption}/code",
        api_key=c.api_key,
        step="code",
    )
    if failure is not None:
        return failure
    failure, answer = await expect(
        conn,
        200,
        "POST",
        f"/api/v2/vouchers/redemptions/{redemption}/verify",
        api_key=c.api_key,
        body={"Code": json.loads(answer)["Code"]},
        idempotency_key=client.next_key(),
        step="verify",
    )
    if failure is None and json.loads(answer)["Status"] != "COMPLETED":
        return Failure("not completed", 200, answer[:300].decode(errors="replace"))
    return failure


async def crypto_deposit(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """1.00 to 99.99 USDC reaching the customer's pay-in address with its chain's finality
    (sandbox): the deposit is credited to their crypto balance at once."""
    body = {
        "Address": c.payin_address,
        "Currency": "USDC",
        "ChainId": 1,
        "Amount": str(_cents(client, 1, 100)),
        "Confirmations": 500,
    }
    failure, answer = await expect(
        conn, 201, "POST", "/api/v2/sandbox/crypto/deposits", api_key=c.api_key, body=body
    )
    if failure is None and json.loads(answer)["Status"] != "CREDITED":
        return Failure("not credited", 201, answer[:300].decode(errors="replace"))
    return failure


async def crypto_card_load(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """5.00 to 24.99 USDC (a load takes at least 5) of the customer's crypto balance loaded
    onto their card: the load, then the chain's confirmation (sandbox), which credits the
    card."""
    user = f"?userId={c.user_id}"
    body = {"CardId": c.card_id, "Amount": _cents(client, 5, 25), "crypto_currency": "USDC"}
    failure, answer = await expect(
        conn,
        201,
        "POST",
        f"/api/v2/card-loads/crypto{user}",
        api_key=c.api_key,
        body={**body, "chain_id": 1},
        idempotency_key=client.next_key(),
        step="load",
    )
    if failure is not None:
        return failure
    load = json.loads(answer)["LoadId"]
    failure, answer = await expect(
        conn,
        200,
        "POST",
        f"/api/v2/sandbox/crypto/card-loads/{load}/confirm{user}",
        api_key=c.api_key,
        body={"Outcome": "CONFIRMED"},
        step="confirm",
    )
    if failure is None and json.loads(answer)["Status"] != "COMPLETED":
        return Failure("not completed", 200, answer[:300].decode(errors="replace"))
    return failure


async def card_authorization(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """A purchase of 1.00 to 4.99 USD with the card (sandbox): the real-time decision holds
    it, which must be an approval."""
    body = {"Amount": _cents(client, 1, 5), "Currency": "USD", "Merchant": "Coffee Shop"}
    failure, answer = await expect(
        conn,
        200,
        "POST",
        f"/api/v2/sandbox/cards/{c.card_id}/authorizations?userId={c.user_id}",
        api_key=c.api_key,
        body=body,
    )
    if failure is None and json.loads(answer)["Approved"] is not True:
        return Failure("declined", 200, answer[:300].decode(errors="replace"))
    return failure


async def card_decision(conn: Connection, c: Customer, client: Client) -> Failure | None:
    """The card provider's real-time request for a purchase of 1.00 to 4.99 USD, signed as the
    provider signs (issue 32's decision alone: no sandbox provider behind it, and the
    provider's events do not follow); it must be approved."""
    content = json.dumps(
        {
            "companyId": c.company_id,
            "authorizationId": f"auth-{client.next_id()}",
            "cardId": c.card_ref,
            "amountMinor": client.rng.randrange(100, 500),
            "currency": "USD",
            "merchant": "Coffee Shop",
        },
        separators=(",", ":"),
    ).encode()
    failure, answer = await expect(
        conn,
        200,
        "POST",
        "/providers/cardprov/authorizations",
        api_key=None,
        content=content,
        headers=inbound.signature_headers(PROVIDER_SECRET, content),
    )
    if failure is None and json.loads(answer)["Approved"] is not True:
        return Failure("declined", 200, answer[:300].decode(errors="replace"))
    return failure


# In the order a run measures them: reads first, then writes; `topup_lane_off` last, on a
# server started again without the batched lane.
OPERATIONS: dict[str, Operation] = {
    "get_user": get_user,
    "list_cards": list_cards,
    "get_balance": get_balance,
    "create_user": create_user,
    "order_card": order_card,
    "topup": topup,
    "unload": unload,
    "company_funding": company_funding,
    "budget_transfer": budget_transfer,
    "payout_create": payout_create,
    "fx_trade": fx_trade,
    "payment_request": payment_request,
    "collection": collection,
    "voucher_redemption": voucher_redemption,
    "crypto_deposit": crypto_deposit,
    "crypto_card_load": crypto_card_load,
    "card_authorization": card_authorization,
    "card_decision": card_decision,
    "topup_lane_off": topup,
}
REQUESTS_PER_OPERATION = {
    "payout_create": 4,
    "fx_trade": 2,
    "payment_request": 2,
    "voucher_redemption": 3,
    "crypto_card_load": 2,
}
LANE_OFF = "topup_lane_off"
