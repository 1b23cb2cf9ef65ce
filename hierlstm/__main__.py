"""`python -m hierlstm ...`: see hierlstm/cli.py."""

import sys

from hierlstm.cli import main

sys.exit(main())
