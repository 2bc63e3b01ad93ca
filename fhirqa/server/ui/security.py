"""Security headers for every response under ``/ui``, and the one place they are added.

The page is hand-written HTML, CSS and ES modules served from ``/ui/static``; nothing runs inline
and nothing is loaded from another origin, so the policy can be strict: ``default-src 'self'``,
no inline scripts or styles, no framing, no plugins. Routes of the UI router use
:class:`SecureRoute`, which adds the headers to successes *and* errors (a 401 from the auth
dependency is answered by the app's exception handlers, outside any route code, so a plain
``Response`` hook would miss it).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request
from fastapi.routing import APIRoute
from starlette.responses import Response

#: ``img-src data:`` is for nothing today but keeps a future inline SVG icon from breaking the page;
#: everything else is same-origin only. ``connect-src 'self'``: fetch() reaches this server only.
CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
))

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",  # for browsers that predate frame-ancestors
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
}


def add_security_headers(response: Response) -> Response:
    """Set the UI's security headers on ``response`` (returned for chaining)."""
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    return response


async def _handled(request: Request, exc: Exception) -> Response:
    """The response the app's own exception handlers give for ``exc`` (re-raised when none applies)."""
    handlers = request.app.exception_handlers
    for kind in type(exc).__mro__:
        handler = handlers.get(kind)
        if handler is not None:
            response = handler(request, exc)
            if not isinstance(response, Response):
                response = await response
            return response
    raise exc


class SecureRoute(APIRoute):
    """An API route whose every response, error answers included, carries :data:`SECURITY_HEADERS`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """Wrap FastAPI's handler (dependencies run inside it, so auth errors are caught here too)."""
        inner = super().get_route_handler()

        async def handler(request: Request) -> Response:
            try:
                response = await inner(request)
            except Exception as exc:  # noqa: BLE001 - answered by the app's handlers, then secured
                response = await _handled(request, exc)
            return add_security_headers(response)

        return handler
