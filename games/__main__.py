"""Entry point of ``python -m games``; see ``games.cli``."""

import sys

from .cli import main

sys.exit(main())
