"""Package list for setuptools (the rest of the metadata is in pyproject.toml).

The repository's top-level ``conf/`` (where users look for the YAML) is installed as the package
``auralgen.conf``, so the configuration ships inside the wheel and is read through
``importlib.resources`` (auralgen/core/resources.py). pyproject.toml cannot add one mapped package
to a ``find`` result, hence these lines.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["auralgen", "auralgen.*"]), "auralgen.conf"],
    package_dir={"auralgen.conf": "conf"},
)
