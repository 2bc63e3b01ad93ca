"""The clinician's web page served by ``fhirqa serve`` at ``/ui/`` (issue 8, docs/ui.md).

Hand-written HTML, CSS and ES modules in ``static/`` (no build step, nothing from other origins),
plus a few JSON helpers under ``/ui/api`` that the server's routes lack (patient search, a patient
header, one raw resource). Everything patient-related goes through the server's bearer-token
authentication and access rules. The app includes :data:`router`.

Modules: ``pages`` (the page and its assets), ``api`` (JSON helpers), ``data`` (their queries),
``security`` (CSP and friends on every response under ``/ui``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from fhirqa.server.errors import ApiError
from fhirqa.server.ui import api, pages
from fhirqa.server.ui.security import CONTENT_SECURITY_POLICY, SECURITY_HEADERS, SecureRoute

router = APIRouter(route_class=SecureRoute, include_in_schema=False)
router.include_router(pages.router)
router.include_router(api.router)


@router.get("/ui/{rest:path}")
async def not_found(request: Request, rest: str) -> None:
    """Anything else under ``/ui``: a 404 that still carries the security headers."""
    raise ApiError(404, "no such page")


__all__ = ["CONTENT_SECURITY_POLICY", "SECURITY_HEADERS", "router"]
