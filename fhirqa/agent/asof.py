"""The record as it stood at ``now``: rows timed after the question's instant are not visible.

A question asked "as of 2019-06-01" must not see a lab drawn in 2020; every relative phrase
("latest", "currently", "in the last year") resolves against this view of the record.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fhirqa.agent.catalog import UnknownView, view_info
from fhirqa.agent.tools.base import PatientRows, names_by_frequency
from fhirqa.agent.tools.localtime import local_now, record_zone

# Views whose times say which clock the record is kept on (visits first: every record has them).
ZONE_VIEWS = ("encounter", "observation")


class AsOf:
    """``PatientRows`` limited to rows whose time is at or before ``now`` (untimed rows stay)."""

    def __init__(self, rows: PatientRows, now: datetime) -> None:
        self.inner = rows
        self.now = now
        self._cache: dict[str, list[dict[str, Any]]] = {}

    def rows(self, view: str) -> list[dict[str, Any]]:
        """The patient's rows of ``view`` up to ``now``."""
        if view not in self._cache:
            rows = self.inner.rows(view)
            try:
                field = view_info(view).time_field
            except UnknownView:
                field = None
            if field:
                rows = [r for r in rows if not isinstance(r.get(field), datetime) or r[field] <= self.now]
            self._cache[view] = rows
        return self._cache[view]

    def items(self, view: str) -> list[str]:
        """Distinct item names up to ``now``, most frequent first."""
        field = view_info(view).name_field
        return names_by_frequency(self.rows(view), field)

    def local_now(self) -> datetime:
        """``now`` on the record's clock (same instant): the offset of the patient's latest visit or result.

        "Today", "yesterday", "on Monday" and "overnight" are then the record's local days. A ``now`` written
        with its own non-UTC offset is the asker's clock and is kept (``localtime.local_now``).
        """
        for view in ZONE_VIEWS:
            try:
                field = view_info(view).time_field
                rows = self.rows(view)
            except (UnknownView, KeyError):
                continue
            times = [r[field] for r in rows if field and isinstance(r.get(field), datetime)]
            zone = record_zone(times)
            if zone is not None:
                return local_now(self.now, zone)
        return local_now(self.now, None)
