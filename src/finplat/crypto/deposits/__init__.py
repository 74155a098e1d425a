"""Stablecoin deposits to pay-in addresses: pending with their confirmations, credited to the
user's crypto balance at the chain's finality, or kept as unsupported deposits."""
