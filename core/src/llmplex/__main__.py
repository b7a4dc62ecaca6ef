"""``python -m llmplex``: the CLI."""

from llmplex.cli.main import main

main()
