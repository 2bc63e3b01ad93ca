"""The offline backend: deterministic, no network, no key; the default."""

from fhirqa.agent.backends.offline.backend import OfflineBackend

__all__ = ["OfflineBackend"]
