"""The batched top-ups' HTTP edge reads a body as the route does and answers with the route's
own bytes: property tests against the route's own functions."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from finplat.cards.funding.batches.lane import read_body
from finplat.cards.funding.batches.service import MESSAGE, render, written_answer
from finplat.cards.funding.schemas import TopupRequest, TopupResponse
from finplat.errors import ApiError
from finplat.http import json_body
from finplat.idempotency.service import fingerprint
from finplat.kit.money import from_minor, requested_amount

instants = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
) | st.builds(
    lambda seconds: datetime(2026, 11, 24, tzinfo=UTC) + timedelta(seconds=seconds),
    st.integers(min_value=0, max_value=10**8),
)


@given(
    funding_id=st.integers(min_value=1, max_value=2**53 - 1),
    amount_minor=st.integers(min_value=500, max_value=25_000_000),
    fee_minor=st.integers(min_value=0, max_value=25_000_000),
    created_at=instants,
)
def test_the_written_answer_is_the_rendered_response(
    funding_id: int, amount_minor: int, fee_minor: int, created_at: datetime
) -> None:
    response = TopupResponse(
        Success=True,
        OrderId=funding_id,
        Token="USD",
        Value=from_minor(amount_minor, "USD"),
        Fee=from_minor(fee_minor, "USD"),
        Message=MESSAGE,
        CreatedAt=created_at,
    )
    assert written_answer(funding_id, amount_minor, fee_minor, created_at) == render(response)


# `Value` as a client may write it: an integer, or a decimal with up to three places (the third
# place makes it one the route refuses), plain or with an exponent, or with a last digit far
# beyond the cents (past the 28 digits Decimal's default context keeps).
values = st.one_of(
    st.builds(
        lambda whole, zeros: f"{whole}.{'0' * zeros}1",
        st.integers(min_value=4, max_value=250_001),
        st.integers(min_value=20, max_value=40),
    ),
    st.integers(min_value=-10, max_value=300_000).map(str),
    st.decimals(min_value=Decimal("-1"), max_value=Decimal("300000"), places=3).map(str),
    st.decimals(min_value=Decimal("1"), max_value=Decimal("300000"), places=2).map(
        lambda d: f"{d:.2e}"
    ),
)


@given(
    card_id=st.integers(min_value=-1, max_value=2**53 + 1),
    token=st.sampled_from(["USD", "usd", "EUR"]),
    value=values,
    order=st.permutations(["CardId", "Token", "Value"]),
    spacing=st.sampled_from(["", " ", "\n  "]),
    query=st.sampled_from(["", "a=1", "b=2&a=1"]),
)
def test_the_edge_takes_exactly_the_bodies_the_route_accepts_with_its_fingerprint(
    card_id: int, token: str, value: str, order: list[str], spacing: str, query: str
) -> None:
    fields = {"CardId": str(card_id), "Token": json.dumps(token), "Value": value}
    body = ("{" + f",{spacing}".join(f'"{k}":{spacing}{fields[k]}' for k in order) + "}").encode()
    taken = read_body(body)
    accepted = _route_accepts(body)
    if taken is None:
        assert accepted is None
        return
    assert accepted is not None
    assert (taken.card_id, taken.amount_minor) == accepted
    assert taken.fingerprint(query) == fingerprint("POST", "/api/v2/cards/topup", query, body)


def _route_accepts(body: bytes) -> tuple[int, int] | None:
    """(card id, cents) when the route's request model and amount rule accept the body."""
    try:
        request = TopupRequest.model_validate(json_body.parse(body))
    except (ValueError, ApiError):
        return None
    try:
        return request.CardId, requested_amount(request.Value, "USD", field="Value").minor
    except ApiError:  # the route's amount rule (INVALID_AMOUNT)
        return None
