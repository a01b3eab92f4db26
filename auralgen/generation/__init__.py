"""Making a dataset: the plan of items (:mod:`.plan`), the item factory (:mod:`.item`), the run
(:mod:`.run`: plan -> executor -> shards -> card and manifest) and its summary (:mod:`.summary`)."""

from auralgen.generation.item import ItemError, ItemResult, Renderer, make_row
from auralgen.generation.plan import ItemSpec, ShardPlan, item_id, plan
from auralgen.generation.run import preflight, run, run_reported

__all__ = [
    "ItemError",
    "ItemResult",
    "ItemSpec",
    "Renderer",
    "ShardPlan",
    "item_id",
    "make_row",
    "plan",
    "preflight",
    "run",
    "run_reported",
]
