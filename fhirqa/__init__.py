"""fhirqa: FHIR-native normalization and question answering over one patient's record."""

__version__ = "0.1.0"
