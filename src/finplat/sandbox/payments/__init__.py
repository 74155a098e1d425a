"""Sandbox simulations of the payments domain: payers paying requests, mandates authorised."""
