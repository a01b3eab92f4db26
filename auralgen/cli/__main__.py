"""``python -m auralgen.cli <command> ...``: the ``auralgen`` command without its console script."""

import sys

from auralgen.cli import main

sys.exit(main())
