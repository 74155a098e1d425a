"""The HTTP edge: the route class, request bodies, limits, errors and the OpenAPI document."""
