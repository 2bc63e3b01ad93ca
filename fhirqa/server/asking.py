"""Answering questions for the server: worker threads, an answer cache, and progress events.

``fhirqa.ask`` is synchronous and CPU-bound; it runs in a bounded pool of worker threads (DuckDB
releases the GIL while it scans, so a few threads overlap well on two cores). Answers of the
deterministic offline backend with an explicit ``now`` are cached per store generation: the same
question about the same record as of the same instant has one answer, and a new ingest (a new
generation) invalidates the cache by changing the key. Identical questions in flight share one
computation. ``Cache-Control: no-cache`` bypasses the cache.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import anyio
import orjson

from fhirqa.agent.backends.base import Backend, Message, ModelTurn, get_backend
from fhirqa.agent.engine import ask, parse_now, shared_connection
from fhirqa.agent.relational import database_for
from fhirqa.errors import FhirqaError
from fhirqa.server.config import ServerConfig
from fhirqa.server.errors import ApiError
from fhirqa.server.schemas import INSTANT_PATTERN
from fhirqa.store import Store

MAX_QUESTION_CHARS = 2000
Emit = Callable[[str, dict[str, Any]], None]


class ObservedBackend:
    """Wraps a backend to report what it decides as it decides it (``plan`` and ``tool`` events)."""

    def __init__(self, inner: Backend, emit: Emit) -> None:
        self.inner = inner
        self.name = inner.name  # the engine branches on the name (offline planner), so keep it
        self.emit = emit
        self._seen_results = 0

    def complete(self, messages: list[Message], tools: list[dict[str, Any]], *, role: str) -> ModelTurn:
        """Delegate, then emit what the turn decided."""
        results = [m for m in messages if m.role == "tool"]
        for message in results[self._seen_results:]:
            self.emit("tool_result", {"tool": message.name, "result": _short(message.content)})
        self._seen_results = len(results)
        turn = self.inner.complete(messages, tools, role=role)
        if role == "planner":
            self.emit("plan", _plan(turn.text))
        for call in turn.tool_calls:
            self.emit("tool", {"tool": call.name, "arguments": call.arguments})
        return turn


def _short(text: str, limit: int = 400) -> Any:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text[:limit]
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k in ("ok", "count", "items", "handle", "error", "time_range")}
    return text[:limit]


def _plan(text: str | None) -> dict[str, Any]:
    try:
        data = orjson.loads(text or "{}")
    except orjson.JSONDecodeError:
        return {"planner": (text or "")[:500]}
    return {"views": data.get("views", [])} if isinstance(data, dict) else {"planner": str(data)[:500]}


class GenerationWatch:
    """The store's current generation, asked several times per request.

    :attr:`Store.manifest` already re-parses ``manifest.json`` only when a ``stat`` says it changed; this adds
    reuse of the last answer for ``fresh_s`` (a commit that lands within those milliseconds raced the request
    anyway), so a request's checks share one ``stat``. :meth:`changed` makes an ingest by this server
    visible at once.
    """

    def __init__(self, store: Store, fresh_s: float = 0.005) -> None:
        self.store = store
        self.fresh_s = fresh_s
        self._generation = 0
        self._checked = -1.0

    def changed(self) -> None:
        """Forget the last answer: the next call looks at the manifest again."""
        self._checked = -1.0

    def current(self) -> int:
        """The generation of the manifest on disk now (0 for a store with none yet)."""
        moment = time.monotonic()
        if moment - self._checked >= self.fresh_s:
            self._generation, self._checked = self.store.manifest.generation, moment
        return self._generation


class PatientIndex:
    """The patient ids of the current generation, loaded once per generation (O(1) existence checks)."""

    def __init__(self, store: Store, generations: GenerationWatch) -> None:
        self.store = store
        self.generations = generations
        self._generation = -1
        self._ids: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def contains(self, patient_id: str) -> bool:
        """True if the store holds this patient now."""
        generation = self.generations.current()
        with self._lock:
            if generation != self._generation:
                ids: frozenset[str] = frozenset()
                if self.store.exists():
                    cursor = shared_connection(self.store).cursor()
                    try:
                        ids = frozenset(r[0] for r in cursor.execute("SELECT patient_id FROM patient").fetchall())
                    finally:
                        cursor.close()
                self._ids, self._generation = ids, generation
            return patient_id in self._ids


class AskService:
    """Runs questions in worker threads with caching, coalescing and a time limit."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.store = Store(config.db)
        self.generations = GenerationWatch(self.store)
        self.patients = PatientIndex(self.store, self.generations)
        self.limiter = anyio.CapacityLimiter(config.ask_threads)
        self.offline_limiter = anyio.CapacityLimiter(config.offline_threads)
        self._cache: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
        self._inflight: dict[tuple[Any, ...], asyncio.Future[dict[str, Any]]] = {}
        self.hits = 0
        self.misses = 0

    def check_request(self, question: Any, now: Any, backend: Any) -> tuple[str, str | None, str]:
        """Validated (question, now as ISO or None, backend name); 400 otherwise."""
        if not isinstance(question, str) or not question.strip():
            raise ApiError(400, "a non-empty question is required", expression=["question"])
        if len(question) > MAX_QUESTION_CHARS:
            raise ApiError(400, f"the question is longer than {MAX_QUESTION_CHARS} characters", expression=["question"])
        if now is not None:
            if not isinstance(now, str) or not re.match(INSTANT_PATTERN, now):
                raise ApiError(400, "now must be an ISO 8601 date or instant", expression=["now"])
            try:
                now = parse_now(now).isoformat()
            except (FhirqaError, ValueError, OverflowError):
                raise ApiError(400, "now must be an ISO 8601 date or instant", expression=["now"]) from None
        if backend is not None and not isinstance(backend, str):
            raise ApiError(400, "backend must be a backend name", expression=["backend"])
        backend = backend or "offline"
        if backend not in self.config.allowed_backends:
            raise ApiError(400, f"backend {str(backend)[:40]!r} is not enabled on this server; enabled: "
                           f"{', '.join(self.config.allowed_backends)}", expression=["backend"])
        return question.strip(), now, backend

    def require_patient(self, patient_id: str, *, relational: bool = False) -> None:
        """404 unless the store holds ``patient_id`` (with ``relational``, also in an OMOP/MIMIC database
        loaded beside the views: questions are answered from it, other endpoints read the views only)."""
        if self.patients.contains(patient_id):
            return
        if relational and database_for(self.store.db, patient_id) is not None:
            return
        raise ApiError(404, "no such patient in this store")

    def _run(self, question: str, patient_id: str | None, now: str | None, backend: str,
             emit: Emit | None) -> dict[str, Any]:
        """One question, synchronously; retried once if an ingest swapped the generation underneath it."""
        for attempt in (1, 2):
            generation = self.generations.current()
            model: Backend = get_backend(backend, **self.config.backend_config.get(backend, {}))
            if emit is not None:
                model = ObservedBackend(model, emit)
            try:
                answer = ask(question, patient_id=patient_id, now=now, db=self.config.db, backend=model,
                             store=self.store).to_dict()
                if answer.get("status") == "error" and attempt == 1 and self.generations.current() != generation:
                    continue  # a tool may have met the old generation's files vanishing: ask again
                return answer
            except FhirqaError:
                raise
            except Exception:
                # A reader can lose its files when a writer collects the old generation: ask again
                # over the new one. Any other failure is real and propagates.
                if attempt == 2 or self.generations.current() == generation:
                    raise
        raise AssertionError("unreachable")

    async def answer(self, question: str, patient_id: str | None, now: str | None, backend: str, *,
                     use_cache: bool = True, emit: Emit | None = None) -> dict[str, Any]:
        """The answer as ``Answer.to_dict()``; 504 when it takes longer than ``ask_timeout_s``."""
        key = None
        if use_cache and now is not None and backend == "offline" and self.config.ask_cache_size > 0:
            key = (self.generations.current(), patient_id, question, now, backend)
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                self.hits += 1
                return cached
            pending = self._inflight.get(key)
            if pending is not None:
                self.hits += 1
                return await asyncio.shield(pending)
        self.misses += 1
        future: asyncio.Future[dict[str, Any]] | None = None
        if key is not None:
            future = asyncio.get_running_loop().create_future()
            self._inflight[key] = future
        try:
            with anyio.fail_after(self.config.ask_timeout_s):
                result = await anyio.to_thread.run_sync(self._run, question, patient_id, now, backend, emit,
                                                        limiter=self.offline_limiter if backend == "offline"
                                                        else self.limiter, abandon_on_cancel=True)
        except TimeoutError:
            error = ApiError(504, f"the question took longer than {self.config.ask_timeout_s:g} s")
            if future is not None:
                future.set_exception(error)
                future.exception()  # mark retrieved: waiters (if any) re-raise it themselves
            raise error from None
        except BaseException as exc:
            if future is not None:
                future.set_exception(exc if isinstance(exc, Exception) else RuntimeError("cancelled"))
                future.exception()
            raise
        finally:
            if key is not None:
                self._inflight.pop(key, None)
        if key is not None:
            assert future is not None
            future.set_result(result)
            if result.get("status") != "error":  # an error may be transient: never serve it again
                self._cache[key] = result
            while len(self._cache) > self.config.ask_cache_size:
                self._cache.popitem(last=False)
        return result
