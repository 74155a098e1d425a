"""Imports every model so that `metadata` describes the whole schema (Alembic, tests)."""

from finplat.auth.models import ApiKey
from finplat.companies.models import Company
from finplat.db.base import Base
from finplat.tiers.models import CardProduct, Tier
from finplat.users.models import User

metadata = Base.metadata

__all__ = ["ApiKey", "CardProduct", "Company", "Tier", "User", "metadata"]
