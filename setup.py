"""Build hook for the optional C speed-ups; everything else is in pyproject.toml.

``fhirqa.normalize._walk`` (reference rewrite and checked flatten) and ``fhirqa.viewdef._chain``
(FHIRPath navigation chains). ``optional=True``: without a C compiler the install still succeeds and
fhirqa runs the Python implementations they mirror.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("fhirqa.normalize._walk", ["fhirqa/normalize/_walk.c"], optional=True,
                  extra_compile_args=["-O2"]),
        Extension("fhirqa.viewdef._chain", ["fhirqa/viewdef/_chain.c"], optional=True,
                  extra_compile_args=["-O2"]),
    ]
)
