"""Evaluate a model: ``python evaluate.py [overrides]`` = ``auralgen evaluate [overrides]`` (see conf/evaluate.yaml)."""

import sys

from auralgen.cli import main

if __name__ == "__main__":
    sys.exit(main(["evaluate", *sys.argv[1:]]))
