"""For tools that still run setup.py: the package metadata lives in pyproject.toml."""
from setuptools import setup

setup()
