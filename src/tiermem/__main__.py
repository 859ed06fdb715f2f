"""`python -m tiermem`: the same command line as `tiermem`."""

import sys

from .cli.main import main

sys.exit(main())
