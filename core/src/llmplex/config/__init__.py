"""Configuration: the schema, where it is read from, and how errors are reported."""
