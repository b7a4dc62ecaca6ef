"""Retries with backoff, deadlines, and token budgets."""
