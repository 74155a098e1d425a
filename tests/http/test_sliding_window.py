"""The in-process sliding window counter behind per-API-key rate limits (`sliding_window`)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from finplat.http.sliding_window import SlidingWindowCounter


def test_limit_hits_in_a_window_are_counted_and_the_next_is_refused() -> None:
    window = SlidingWindowCounter(3, 60)
    assert [window.hit("k", 120.0 + i) for i in range(3)] == [None, None, None]
    wait = window.hit("k", 130.0)
    assert wait is not None
    assert wait == pytest.approx(50.0)  # the rest of the window: its count then starts to fade


def test_a_refused_hit_is_not_counted() -> None:
    window = SlidingWindowCounter(1, 10)
    assert window.hit("k", 0.0) is None
    for _ in range(5):
        assert window.hit("k", 1.0) is not None
    # Half of the previous window's single hit still weighs 0.5 < 1: counted.
    assert window.hit("k", 15.0) is None


def test_the_previous_window_weighs_by_the_share_still_inside_the_sliding_window() -> None:
    window = SlidingWindowCounter(10, 10)
    for i in range(10):
        assert window.hit("k", 5.0 + i * 0.1) is None
    # At 12.5 a quarter of the next window is gone: 10 * 0.75 = 7.5 still weighs, room for 3.
    counted = sum(1 for _ in range(10) if window.hit("k", 12.5) is None)
    assert counted == 3


def test_keys_are_counted_apart() -> None:
    window = SlidingWindowCounter(1, 60)
    assert window.hit(1, 0.0) is None
    assert window.hit(1, 0.0) is not None
    assert window.hit(2, 0.0) is None


def test_keys_idle_for_two_windows_are_forgotten() -> None:
    window = SlidingWindowCounter(5, 1)
    for key in range(100):
        window.hit(key, 0.5)
    window.hit("late", 3.5)
    assert len(window) == 1


def test_a_limit_needs_a_positive_count_and_window() -> None:
    with pytest.raises(ValueError, match="positive"):
        SlidingWindowCounter(0, 1)
    with pytest.raises(ValueError, match="positive"):
        SlidingWindowCounter(1, 0)


@given(
    limit=st.integers(1, 20),
    seconds=st.sampled_from([1.0, 10.0, 60.0]),
    gaps=st.lists(st.floats(0, 3, allow_nan=False), min_size=1, max_size=200),
)
def test_no_fixed_window_counts_more_than_the_limit(
    limit: int, seconds: float, gaps: list[float]
) -> None:
    window = SlidingWindowCounter(limit, seconds)
    now = 1000.0
    counted: Counter[int] = Counter()
    for gap in gaps:
        now += gap * seconds
        if window.hit("k", now) is None:
            counted[int(now // seconds)] += 1
    assert max(counted.values(), default=0) <= limit


@given(
    limit=st.integers(1, 20),
    seconds=st.sampled_from([1.0, 10.0, 60.0]),
    gaps=st.lists(st.floats(0, 0.5, allow_nan=False), min_size=1, max_size=100),
)
def test_a_hit_after_the_wait_it_was_told_is_counted(
    limit: int, seconds: float, gaps: list[float]
) -> None:
    window = SlidingWindowCounter(limit, seconds)
    now = 1000.0
    for gap in gaps:
        now += gap * seconds
        wait = window.hit("k", now)
        if wait is not None:
            assert 0 <= wait <= 2 * seconds
            assert window.hit("k", now + wait + 1e-6 * seconds) is None
            return
