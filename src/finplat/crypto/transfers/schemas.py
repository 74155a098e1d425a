from __future__ import annotations

from finplat.crypto.exchange.schemas import CryptoTransferResponse
from finplat.kit.pagination import Page


class CryptoTransferPage(Page[CryptoTransferResponse]):
    """Crypto transfers, newest first."""
