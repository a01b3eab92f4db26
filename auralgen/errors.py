from auralgen.core.errors import *  # noqa: F403  (shim: the exception tree lives in auralgen.core.errors)
