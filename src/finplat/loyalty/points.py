"""What a paid amount earns, pure: integer points, never a fraction.

* `PER_CURRENCY_UNIT`: `rate` points per whole unit of the purchase's currency paid, rounded
  down (12.99 USD at 2 points a unit earns 25);
* `PER_TRANSACTION`: `rate` points for a purchase with anything paid, none once it is refunded
  in full.

The amount paid is what was cleared less what was refunded, so a refund takes back what it
refunds and a purchase only authorized earns nothing yet.
"""

from __future__ import annotations

from finplat.kit.money import exponent
from finplat.loyalty.models import PointsRule


def earned(rule: PointsRule, rate: int, *, paid_minor: int, currency: str) -> int:
    if paid_minor <= 0 or rate <= 0:
        return 0
    if rule is PointsRule.PER_TRANSACTION:
        return rate
    scale: int = 10 ** exponent(currency)
    return paid_minor * rate // scale
