"""finplat: a self-hostable banking-as-a-service platform."""

__version__ = "0.1.0"
