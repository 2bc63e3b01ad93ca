"""Identifiers for server-made resources and requests (Provenance, AuditEvent, answers, request ids).

``uuid.uuid4()`` reads the kernel's random source on every call, a system call that costs more than
the rest of a cached answer on some hosts. These ids must be unique, not secret (they name records
anyone holding them may already read): 128 bits from a generator seeded once from the kernel's random
source, formatted like a UUID4 hex. Secrets (tokens, their ``jti``) keep using ``uuid``/``secrets``.
"""

from __future__ import annotations

import os
import random
import uuid

# Unique, not secret (see above); getrandbits is atomic under the GIL, so threads may share it.
_random = random.Random(os.urandom(32))  # noqa: S311


def new_id() -> str:
    """A fresh random (version 4) UUID as 32 hex digits."""
    return uuid.UUID(int=_random.getrandbits(128), version=4).hex
