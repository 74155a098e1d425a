"""The sandbox simulator of this capability: its adapter and, in models.py, its own tables."""
