"""Sandbox-only operations (exist only while the sandbox providers are active)."""
