"""The command line."""

from hierlstm.cli.main import main

__all__ = ["main"]
