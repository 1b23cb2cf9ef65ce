"""The command line, `python -m hierlstm COMMAND ...`: its grammar (`parser`), the commands
(`commands`, `timing`), their text tables (`format`) and the dispatch (`main`)."""

from hierlstm.cli.main import main

__all__ = ["main"]
