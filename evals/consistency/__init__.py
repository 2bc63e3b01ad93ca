"""Labelled note–table consistency set: generator (raw Synthea bundles → notes with known inconsistencies) and scorer.

The generator (``generate.py`` with ``record.py``, ``vocab.py``, ``writer.py``, ``inject.py``) imports nothing
from ``fhirqa``: it reads the raw bundles itself, so the labels never depend on the views under test.
"""
