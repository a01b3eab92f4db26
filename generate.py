"""Generate a dataset: ``python generate.py [overrides]`` = ``auralgen generate [overrides]`` (see conf/ and README)."""

import sys

from auralgen.cli import main

if __name__ == "__main__":
    sys.exit(main(["generate", *sys.argv[1:]]))
