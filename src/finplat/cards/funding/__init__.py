"""Money onto and off cards: top-ups, unloads, fees, automatic top-ups, decline fees and the
provider blocks they cause, and stablecoin deposits."""
