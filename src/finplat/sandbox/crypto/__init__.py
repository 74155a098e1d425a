"""Sandbox crypto simulations: transfers arriving on chain, blocks, reorganisations."""
