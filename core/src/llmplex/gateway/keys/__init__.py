"""Keys and access: who is calling and may they make this call (``access``, ``auth``), the virtual keys
(``store``), their caps and budgets (``limits``, ``budget``, ``unpriced``), the master key and who owns
the response ids the gateway hands out (``owners``)."""
