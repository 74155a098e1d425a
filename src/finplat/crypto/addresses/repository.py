from __future__ import annotations

from finplat.crypto.addresses.models import CryptoPayinAddress
from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.repository import CompanyRepository
from finplat.kit.clock import utcnow


class PayinAddressRepository(CompanyRepository[CryptoPayinAddress]):
    model = CryptoPayinAddress

    async def of_user(
        self, user_id: int, *, currency: str, chain_id: int
    ) -> CryptoPayinAddress | None:
        stmt = self.scoped().where(
            CryptoPayinAddress.user_id == user_id,
            CryptoPayinAddress.currency == currency,
            CryptoPayinAddress.chain_id == chain_id,
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def keep(
        self, *, user_id: int, currency: str, chain_id: int, address: str, provider: str
    ) -> CryptoPayinAddress:
        """Record the issued address once; parallel requests for the same triple all answer
        the row that was written first."""
        await self.session.execute(
            insert_ignoring_conflicts(self.session, CryptoPayinAddress).values(
                company_id=self.company_id,
                user_id=user_id,
                currency=currency,
                chain_id=chain_id,
                address=address,
                provider=provider,
                created_at=utcnow(),
            )
        )
        kept = await self.of_user(user_id, currency=currency, chain_id=chain_id)
        assert kept is not None
        return kept

    async def by_address(self, address: str) -> list[CryptoPayinAddress]:
        """Every pair an address was issued for (a rail may reuse one address for both
        stablecoins of a chain)."""
        stmt = self.scoped().where(CryptoPayinAddress.address == address)
        return list((await self.session.execute(stmt)).scalars())

    async def of_user_all(self, user_id: int) -> list[CryptoPayinAddress]:
        stmt = (
            self.scoped()
            .where(CryptoPayinAddress.user_id == user_id)
            .order_by(CryptoPayinAddress.id)
        )
        return list((await self.session.execute(stmt)).scalars())
