"""`python -m hierlstm ...`: see hierlstm/cli.py."""

import sys

from hierlstm.cli.main import main

sys.exit(main())
