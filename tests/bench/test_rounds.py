"""The benchmark's interleaved rounds (`bench/rounds.py`): the order cancels a linear drift."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.bench.bench_modules import load

rounds = load("rounds")


def test_rounds_alternate_the_order_of_the_scenarios() -> None:
    assert rounds.schedule(["a", "b", "c"], 2) == [
        (0, "a"), (0, "b"), (0, "c"), (1, "c"), (1, "b"), (1, "a"),
    ]  # fmt: skip


@pytest.mark.parametrize("count", [0, 1, 3])
def test_rounds_must_be_an_even_number(count: int) -> None:
    with pytest.raises(ValueError, match="even"):
        rounds.schedule(["a", "b"], count)


@given(
    scenarios=st.integers(min_value=1, max_value=5),
    half=st.integers(min_value=1, max_value=4),
)
def test_every_scenario_sits_at_the_same_mean_moment_of_the_run(scenarios: int, half: int) -> None:
    names = [f"s{i}" for i in range(scenarios)]
    order = rounds.schedule(names, 2 * half)
    moments = {
        name: sum(at for at, (_, which) in enumerate(order) if which == name) for name in names
    }
    assert len(set(moments.values())) == 1
    assert all(sum(1 for _, which in order if which == name) == 2 * half for name in names)


def test_slices_combine_as_one_window_of_their_summed_length() -> None:
    combined = rounds.Slices()
    combined.add([0.010] * 300, 1.0)  # a fast slice
    combined.add([0.030] * 100, 1.0)  # a slow one
    assert combined.ops_per_s == 200.0
    assert combined.percentile_ms(0.50) == 10.0
    assert combined.percentile_ms(0.99) == 30.0


def test_a_slice_less_scenario_has_no_rate() -> None:
    assert rounds.Slices().ops_per_s == 0.0
    assert rounds.Slices().percentile_ms(0.99) == 0.0


def test_figures_are_weighted_by_their_slices_length() -> None:
    assert rounds.time_weighted_mean([(1000.0, 3.0), (2000.0, 1.0)]) == 1250.0
    assert rounds.time_weighted_mean([]) == 0.0
