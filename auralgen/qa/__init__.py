from auralgen.core.qa import *  # noqa: F403  (shim: questions and answers live in auralgen.core.qa)
