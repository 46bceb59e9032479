"""Fault tests import the helpers of tests/ (child_process, fake_machine) as top-level
modules."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
