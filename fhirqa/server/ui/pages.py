"""The page (``/ui/``) and its static assets (``/ui/static/<file>``).

Assets are read from the package's ``static/`` folder: a fixed set of plain files, no build step.
In ``--dev`` mode the page carries a freshly minted dev token in a ``<meta>`` element so a local
user is signed in at once; the script reads it into memory and removes the element. It is only
injected when both the client and the ``Host`` the browser used are loopback (a page on another
site that re-points its own name at 127.0.0.1 must not be handed a token).
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi import Path as PathParam
from starlette.responses import RedirectResponse, Response

from fhirqa.server.deps import audit_context, server
from fhirqa.server.errors import ApiError
from fhirqa.server.ui.security import SecureRoute

STATIC = Path(__file__).resolve().parent / "static"
#: What a file's suffix is served as; anything else is not served.
MEDIA_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
               ".svg": "image/svg+xml", ".png": "image/png", ".ico": "image/x-icon"}
_DEV_MARKER = "<!-- fhirqa:dev-token -->"
_LOOPBACK = ("127.0.0.1", "::1", "localhost")
_NAME = r"^[a-z0-9][a-z0-9_-]{0,60}\.[a-z]{2,4}$"

router = APIRouter(route_class=SecureRoute, include_in_schema=False)


@lru_cache(maxsize=1)
def _page() -> str:
    return (STATIC / "index.html").read_text("utf-8")


def _host_name(host_header: str) -> str:
    """``127.0.0.1`` from ``127.0.0.1:8000``, ``::1`` from ``[::1]:8000``."""
    if host_header.startswith("["):
        return host_header[1:].split("]", 1)[0]
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def dev_token_for(request: Request) -> str | None:
    """A dev token for this request, when the server runs with ``--dev`` and the caller is local."""
    state = server(request)
    if not state.config.dev:
        return None
    client = request.client.host if request.client else ""
    if client not in _LOOPBACK or _host_name(request.headers.get("host", "")) not in _LOOPBACK:
        return None
    return state.issuer.dev_token()


@router.get("/ui")
async def ui_redirect() -> Response:
    """``/ui`` → ``/ui/`` (relative, so a path prefix in front of the server survives)."""
    return RedirectResponse("ui/", status_code=308)


@router.get("/ui/")
async def page(request: Request) -> Response:
    """The clinician's page."""
    audit_context(request).operation = "ui-page"
    text = _page()
    token = dev_token_for(request)
    if token is not None:
        text = text.replace(_DEV_MARKER, f'<meta name="fhirqa-dev-token" content="{html.escape(token)}">')
    return Response(text, media_type="text/html; charset=utf-8",
                    headers={"Cache-Control": "no-store"})


@router.get("/ui/static/{name}")
async def static(request: Request, name: str = PathParam(max_length=64)) -> Response:
    """One asset of the page (a fixed folder, no sub-paths, known file types only)."""
    audit_context(request).operation = "ui-static"
    suffix = Path(name).suffix
    file = STATIC / name
    if not re.match(_NAME, name) or suffix not in MEDIA_TYPES or not file.is_file():
        raise ApiError(404, "no such file")
    # no-cache: the browser revalidates each load, so a new release never runs with stale scripts.
    return Response(file.read_bytes(), media_type=MEDIA_TYPES[suffix], headers={"Cache-Control": "no-cache"})
