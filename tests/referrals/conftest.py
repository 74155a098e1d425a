"""Fixtures of the referral tests: a platform operator's client."""

from tests.vouchers.conftest import operator

__all__ = ["operator"]
