"""The spend log: each finished request's row (``log``), journaled locally on its way to the database
(``journal``), with its prompt and answer when asked (``bodies``), and what a request may cost before it
is sent (``estimate``)."""
