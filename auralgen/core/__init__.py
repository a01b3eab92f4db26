"""The bottom layer: errors, constants, seeding and distributions, QA helpers, the Registry.

Nothing in :mod:`auralgen.core` imports another auralgen package.
"""
