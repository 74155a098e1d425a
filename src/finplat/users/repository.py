from __future__ import annotations

from sqlalchemy import Select

from finplat.db.repository import CompanyRepository
from finplat.users.models import User


class UserRepository(CompanyRepository[User]):
    model = User

    def listing(self, *, external_user_id: str | None) -> Select[User]:
        stmt = self.scoped()
        if external_user_id is not None:
            stmt = stmt.where(User.external_user_id == external_user_id)
        return stmt.order_by(User.id)
