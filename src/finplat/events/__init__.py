"""Events (the outbox), webhook delivery and the events API."""
