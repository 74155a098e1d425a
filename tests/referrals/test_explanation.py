"""A reward's amount is what its `Explanation` says (property tests of the pure computation;
the HTTP test `test_every_amount_is_what_its_explanation_says` checks stored rewards)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from finplat.referrals import computation

basis = st.integers(min_value=0, max_value=10**15)
bps = st.integers(min_value=0, max_value=10_000)


@given(basis, bps)
def test_a_share_recomputed_from_its_explanation_is_the_amount(minor: int, share: int) -> None:
    computed = computation.bps_of_basis(
        minor, share, currency="USD", level_code="L", basis="VOLUME"
    )
    # Stored as JSON and read back, as the ledger does.
    assert computation.recompute(json.loads(json.dumps(computed.explanation))) == (
        computed.amount_minor
    )


@given(basis, bps)
def test_a_share_never_exceeds_its_basis_and_rounds_down(minor: int, share: int) -> None:
    amount = computation.bps_of_basis(
        minor, share, currency="USD", level_code="L", basis="FEE"
    ).amount_minor
    assert 0 <= amount <= minor
    assert amount * 10_000 <= minor * share < (amount + 1) * 10_000


@given(st.integers(min_value=0, max_value=10**12))
def test_a_fixed_reward_recomputes_to_itself(minor: int) -> None:
    computed = computation.fixed(minor, currency="USD", level_code="L", rule="R")
    assert computation.recompute(computed.explanation) == minor
