"""The store: a folder of Parquet (raw resources, facts, mapped tables, canonical views) read with DuckDB."""

from fhirqa.store.ingest import IngestReport, ingest
from fhirqa.store.store import QueryError, QueryResult, Store

__all__ = ["IngestReport", "QueryError", "QueryResult", "Store", "ingest"]
