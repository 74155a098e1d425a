"""Payments: payment requests (a user asks to be paid into a budget), mandates and
collections."""
