"""Merchant of Record: the public API under `/api/v2/mor/public` for companies enabled for MOR."""
