"""Sources of FHIR resources: one protocol (:class:`Source`), one module per kind of source."""

from fhirqa.sources.base import Origin, RawRecord, Source
from fhirqa.sources.files import FileSource

__all__ = ["FileSource", "Origin", "RawRecord", "Source"]
