"""Card top-ups in batches (PostgreSQL): the lane that takes `POST /api/v2/cards/topup` off the
framework, the runners that reserve, load and post many top-ups together, and their SQL.

Fenced: nothing outside this package imports it but the application assembly (`finplat.app`);
the rule is a contract of `make lint` (pyproject.toml, `[tool.importlinter]`)."""
