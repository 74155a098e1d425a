"""Persistence: models base, engine, unit of work and migrations."""
