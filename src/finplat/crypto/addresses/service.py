"""Pay-in addresses (spec: `POST /api/v2/crypto-virtual-accounts/payin-address`, with the
required `crypto_currency` and `chain_id`).

Rules:
* Only the spec's pairs: USDC or USDT on chain 1, -200, 137 or 42161 (the schema refuses any
  other with 400).
* The user must be the company's (404) and identity-verified (409 `KYC_NOT_APPROVED`): a rail
  issues deposit addresses to verified customers only.
* One stable address per user, stablecoin and chain: a repeat, sequential or parallel, answers
  the address first issued. The rail is asked with a reference fixed per user, so it too
  answers its first address, and the platform keeps the first one it recorded.
* The address is in the chain's format (EIP-55 hex on the EVM chains, base58check `T...` on
  Tron); an address from the rail that is not is never handed out (502).
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.addresses.models import CryptoPayinAddress
from finplat.crypto.addresses.repository import PayinAddressRepository
from finplat.errors import ApiError
from finplat.kyc import approval
from finplat.providers.calls import commit_then_call
from finplat.providers.crypto import addresses
from finplat.providers.crypto.port import Chain, Stablecoin
from finplat.providers.registry import Providers, configured

NO_CRYPTO = "No crypto rail is configured."


class MalformedProviderAddress(ApiError):
    status = 502
    code = "PROVIDER_ADDRESS_INVALID"
    message = "The crypto rail answered an address that is not valid for the chain; try again."


def provider_reference(user_id: int) -> str:
    """The rail's reference for a user's addresses: the same on every request."""
    return f"user:{user_id}"


async def payin_address(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    currency: Stablecoin,
    chain: Chain,
) -> CryptoPayinAddress:
    """The user's pay-in address for the pair, issued by the rail on first request."""
    await approval.require_base_approval(session, company_id=company_id, user_id=user_id)
    repository = PayinAddressRepository(session, company_id)
    known = await repository.of_user(user_id, currency=currency.value, chain_id=chain.value)
    if known is not None:
        return known
    rail = configured(providers.crypto, NO_CRYPTO)
    reference = provider_reference(user_id)
    issued = await commit_then_call(
        session,
        providers.policy,
        provider=rail.name,
        operation="deposit_address",
        call=lambda: rail.deposit_address(
            company_id=company_id, reference=reference, currency=currency, chain=chain
        ),
        idempotent=True,  # one address per reference, currency and chain at the rail
    )
    if not addresses.is_valid(chain, issued.address):
        raise MalformedProviderAddress()
    return await repository.keep(
        user_id=user_id,
        currency=currency.value,
        chain_id=chain.value,
        address=addresses.canonical(chain, issued.address),
        provider=rail.name,
    )


async def addresses_of(
    session: AsyncSession, *, company_id: int, user_id: int
) -> list[CryptoPayinAddress]:
    return await PayinAddressRepository(session, company_id).of_user_all(user_id)
