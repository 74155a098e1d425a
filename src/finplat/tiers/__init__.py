"""Tiers: product packages that decide which card products and features a user gets."""
