"""``python -m flexible_manipulator.studies study.yaml``: the sweep command (`cli`)."""

import sys

from .cli import main

sys.exit(main())
