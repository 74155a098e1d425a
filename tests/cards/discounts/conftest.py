"""Fixtures of the discount code tests: a platform operator's client (the vouchers')."""

from tests.vouchers.conftest import operator

__all__ = ["operator"]
