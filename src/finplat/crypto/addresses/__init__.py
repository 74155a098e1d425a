"""Pay-in addresses: one stable deposit address per user, stablecoin and chain."""
