"""Secrets at rest: sealed (AES-256-GCM) with the configured `FINPLAT_SECRET_KEY` before they
reach the database, opened only in memory."""
