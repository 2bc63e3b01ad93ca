"""Gold-answer toolkit for the Synthea question set.

Independent of fhirqa on purpose: it reads the raw FHIR R4 bundles with ``orjson`` and nothing else,
so the gold answers never share a bug with the system they grade. Modules:

- ``record``: bundle → :class:`~synthea_gold.record.PatientRecord` (references resolved by hand).
- ``timeutil``: windows, calendar arithmetic, completed days/months/years.
- ``vocab``: item and concept tables (LOINC codes, name patterns, clinician phrasings).
- ``phrasing``: voices (her/his/my/the patient's), date formats, window phrases.
- ``gen_values``, ``gen_events``, ``gen_people``: candidate questions per category.
- ``select``: deterministic, patient-diverse choice of candidates per category.
"""
