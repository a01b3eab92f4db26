"""Old import path of the generation pipeline, kept for callers not yet moved (removed in step 12).

The code lives in :mod:`auralgen.generation` (plan, item factory, run, summary),
:mod:`auralgen.export.manifest` (journal, manifest, ``out`` checks) and :mod:`auralgen.config`
(``build_tasks``, ``fingerprint``, ``config_record``).
"""

from auralgen.config import build_tasks, config_record, fingerprint
from auralgen.errors import AuralgenError
from auralgen.generation.item import ItemError, Renderer, make_row, worst_error
from auralgen.generation.plan import ItemSpec, ShardPlan, check_capacity, count_items, item_id, plan
from auralgen.generation.run import preflight, run, run_reported
from auralgen.random import owner

__all__ = ["AuralgenError", "ItemError", "ItemSpec", "Renderer", "ShardPlan", "build_tasks", "check_capacity",
           "config_record", "count_items", "fingerprint", "item_id", "make_row", "owner", "plan", "preflight", "run",
           "run_reported", "worst_error"]  # fmt: skip
