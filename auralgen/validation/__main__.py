"""``python -m auralgen.validation <dataset dir>``: the former spelling of ``auralgen audit``
(auralgen/cli/audit.py); the report's text tables are ``AuditReport.table()`` (validation/report.py)."""

from __future__ import annotations

import runpy
import sys

if __name__ == "__main__":
    sys.argv[1:1] = ["audit"]
    runpy.run_module("auralgen.cli", run_name="__main__", alter_sys=True)
