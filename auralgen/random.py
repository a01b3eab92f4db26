from auralgen.core.random import *  # noqa: F403  (shim: seeding and distributions live in auralgen.core.random)
