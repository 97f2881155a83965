#!/usr/bin/python3
"""Command-line wrapper: the logic is fabricsim_analysis.cluster (see its docstring and analysis/README.md)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from fabricsim_analysis.cluster import *  # noqa: E402,F401,F403  (old imports of this script keep working)
from fabricsim_analysis.cluster import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
