"""Types of the optional C chains (``_chain.c``); see :func:`fhirqa.viewdef.chain.fast_chain`."""

from collections.abc import Callable
from typing import Any

class Chain:
    def __init__(
        self, members: tuple[tuple[str, bool, tuple, tuple, str | None], ...], steps: tuple,
        walk: Callable[..., list], refkey: Callable[..., Any] | None, ref_type: str | None,
    ) -> None: ...
    def __call__(self, inp: list, env: Any, /) -> list: ...

def own_row(columns: tuple[tuple[Callable[..., Any], bool], ...], focus: list, env: Any, /) -> tuple | None: ...
