"""Providers that ship with core."""
