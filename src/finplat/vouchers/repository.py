"""SQL for voucher groups and vouchers, every statement scoped to one company."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Select

from finplat.db.repository import CompanyRepository
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page
from finplat.vouchers.models import Voucher, VoucherGroup


class GroupRepository(CompanyRepository[VoucherGroup]):
    model = VoucherGroup

    async def find(self, group_id: str) -> VoucherGroup | None:
        stmt = self.scoped().where(VoucherGroup.id == group_id)
        found: VoucherGroup | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found


class VoucherRepository(CompanyRepository[Voucher]):
    model = Voucher

    async def add_all(self, vouchers: Sequence[Voucher]) -> None:
        for voucher in vouchers:
            voucher.company_id = self.company_id
        self.session.add_all(vouchers)
        await self.session.flush()

    async def page(self, request: PageRequest, *, group_id: str | None) -> PageSlice[Voucher]:
        stmt: Select[Voucher] = self.scoped().order_by(Voucher.created_at, Voucher.id)
        if group_id is not None:
            stmt = stmt.where(Voucher.group_id == group_id)
        return await fetch_page(self.session, stmt, request)

    async def by_id(self, voucher_id: str) -> Voucher | None:
        stmt = (
            self.scoped().where(Voucher.id == voucher_id).execution_options(populate_existing=True)
        )
        found: Voucher | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def by_code_hash(self, code_hash: str) -> Voucher | None:
        stmt = self.scoped().where(Voucher.code_hash == code_hash)
        found: Voucher | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found
