"""``python -m flexible_manipulator.studies study.yaml``: the ``sweep`` command (`cli`)."""

import sys

from .cli import main

if __name__ == '__main__':
    sys.exit(main())
