"""Keeping secrets out of everything llmplex shows: values (``values``), errors and their causes (``errors``),
and log records (``logs``). The bottom layer of core: it imports nothing of llmplex."""
