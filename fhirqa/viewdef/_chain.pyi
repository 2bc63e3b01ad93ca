"""Types of the optional C chains and row assembly (``_chain.c``); see :mod:`fhirqa.viewdef.chain` and
:mod:`fhirqa.viewdef.runner`."""

from collections.abc import Callable
from typing import Any

STEP_KINDS: int

class Chain:
    """A compiled chain: the twin of ``chain.walk(inp, env, steps)``; also callable as an invocation."""

    steps: tuple
    def __init__(
        self, steps: tuple, walk: Callable[..., list], reference_key: Callable[..., Any],
        choice_suffixes: frozenset[str],
    ) -> None: ...
    def __call__(self, inp: list, *focus_env: Any) -> list: ...

class Gen:
    """A compiled select: ``gen(focus, env, idx) -> rows``."""

    flat_extractors: list | None
    def __call__(self, focus: list, env: Any, idx: int, /) -> list[tuple]: ...

class Rows:
    """A compiled view's ``rows(resource)``."""

    def __call__(self, resource: dict, /) -> list[tuple]: ...

def own_row(columns: tuple[tuple[Callable[..., Any], bool], ...], focus: list, env: Any, /) -> tuple | None: ...
def body(columns: tuple, nodes: tuple, kids: tuple, fallback: Callable[..., Any], flat_extractors: Any, /) -> Gen: ...
def each(items_of: Callable[..., list], or_null: bool, body: Callable[..., list[tuple]], /) -> Gen: ...
def union(branches: tuple, /) -> Gen: ...
def join(chain: Chain, sep: str, fallback: Callable[..., list], /) -> Callable[..., list]: ...
def rows(gen: Gen, resource_type: str, env_type: type, failed: Callable[..., Any], /) -> Rows: ...
