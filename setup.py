"""Build hook for the optional C walks (``fhirqa.normalize._walk``); everything else is in pyproject.toml.

``optional=True``: without a C compiler the install still succeeds and fhirqa runs the Python walks.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("fhirqa.normalize._walk", ["fhirqa/normalize/_walk.c"], optional=True,
                  extra_compile_args=["-O2"]),
    ]
)
