"""Configuration files, not code: installed as the package data of ``auralgen.conf``.

pyproject.toml / setup.py map this folder onto ``auralgen.conf``; the library finds it with
:func:`auralgen.core.resources.conf_dir` (``importlib.resources``), in a wheel as in a checkout.
"""
