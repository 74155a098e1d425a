"""API keys, the authenticated principal and the route class that enforces both."""
