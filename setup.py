"""The package list, found rather than kept by hand (DESIGN.md §12, §14).

The repository keeps its folders engine/, memext/ and tray/, which install
as memext.engine, memext and memext.tray (``package-dir`` in
pyproject.toml), so the wheel's only top-level name is ``memext``.
setuptools' own discovery would name the subpackages after the folders
(``engine.store``), so they are found here and named after the packages
they install as: a new subpackage (a store backend, a provider folder)
ships without a line in any list. Everything else is in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

# Folders without __init__.py are found too: data folders such as
# engine/providers/local/data (reference vectors) ship as packages of data.
FOUND = find_namespace_packages(include=["engine", "engine.*", "tray", "tray.*"], exclude=["*.__pycache__"])

setup(packages=["memext", *(f"memext.{name}" for name in FOUND)])
