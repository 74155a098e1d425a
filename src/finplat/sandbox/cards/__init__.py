"""The sandbox card surfaces: purchases, stablecoin deposits, callbacks delivered now, a
provider's own cancellation, and the secure widget page."""
