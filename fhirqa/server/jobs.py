"""Background jobs: ingestion queued behind one writer, and asynchronous questions.

The store admits one writer at a time and its lock fails fast, so every ingest runs on a single
writer thread, in order of arrival. An ingest job and its uploaded input are written to the state
folder (``jobs/<id>.json``, fsynced) before the server acknowledges it; the job is marked
``completed`` only after ``fhirqa.ingest`` returned, i.e. after the new generation's manifest swap.
So a job a client saw completed is in the store, whatever happens next. A job found ``running``
when the server starts was cut short (crash, kill): it is marked ``interrupted`` and queued again
(ingest is idempotent), unless its input is gone (a pull whose token was never written to disk).

Asynchronous questions (``Prefer: respond-async``) are jobs too, kept in memory only: their
question and answer never touch the disk, and they are quick to ask again after a restart.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import orjson

from fhirqa.errors import FhirqaError, StoreError
from fhirqa.server.config import ConfigError
from fhirqa.server.errors import ApiError, outcome
from fhirqa.server.ingest_sources import job_source
from fhirqa.store.ingest import ingest

log = logging.getLogger("fhirqa.server")
MAX_ATTEMPTS = 3
LOCK_RETRY_S = 1.0  # another process (a CLI ingest) holds the store lock: try again after this
KEEP_FINISHED_S = 7 * 24 * 3600
KEEP_ASK_S = 3600
ACTIVE = ("queued", "running")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class Job:
    """One unit of background work and what became of it."""

    id: str
    kind: str  # ingest (an uploaded body), pull (from a FHIR server), ask
    owner: str  # Principal.key of whoever started it
    patient: str | None = None  # the patient it is about (ask), for patient-context visibility
    status: str = "queued"  # queued, running, completed, failed, interrupted
    created: str = field(default_factory=_now)
    started: str | None = None
    finished: str | None = None
    request: dict[str, Any] = field(default_factory=dict)  # non-secret parameters only
    result: Any = None
    error: dict[str, Any] | None = None  # an OperationOutcome
    progress: int = 0  # records read so far
    attempts: int = 0
    notes: list[str] = field(default_factory=list)

    def public(self, base_url: str) -> dict[str, Any]:
        """What a client sees: everything but the owner key."""
        data = {k: v for k, v in asdict(self).items() if k != "owner"}
        data["url"] = f"{base_url}/jobs/{self.id}"
        return data


class JobManager:
    """Owns the job records, the writer thread and the asynchronous questions."""

    def __init__(self, db: Path, state_dir: Path, on_commit: Callable[[], None] | None = None) -> None:
        self.db = db
        self.on_commit = on_commit  # told after each ingest this server commits (questions see it at once)
        self.dir = state_dir / "jobs"
        self._jobs: dict[str, Job] = {}
        self._secrets: dict[str, dict[str, str]] = {}  # job id → token for a pull; memory only
        self._lock = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._runner_lock: TextIO | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Load persisted jobs, recover interrupted ones, start the writer thread."""
        self.dir.mkdir(parents=True, exist_ok=True)
        handle = (self.dir / ".runner.lock").open("a+")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.close()
            raise ConfigError(f"{self.dir}: another fhirqa server is using this state folder") from exc
        self._runner_lock = handle
        self._recover()
        self._thread = threading.Thread(target=self._writer, name="fhirqa-writer", daemon=True)
        self._thread.start()

    def stop(self, grace_s: float) -> None:
        """Let the running ingest finish for up to ``grace_s``; if it cannot, mark it interrupted."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(grace_s)
        with self._lock:
            for job in self._jobs.values():
                if job.kind != "ask" and job.status == "running":
                    job.status = "interrupted"
                    job.notes.append("the server stopped while this job ran; it resumes at the next start")
                    self._save(job)
        for task in self._tasks:
            task.cancel()
        if self._runner_lock is not None:
            self._runner_lock.close()
            self._runner_lock = None

    def _recover(self) -> None:
        cutoff = time.time() - KEEP_FINISHED_S
        for path in sorted(self.dir.glob("*.json")):
            try:
                job = Job(**orjson.loads(path.read_bytes()))
            except (orjson.JSONDecodeError, TypeError, OSError):
                log.warning("ignoring an unreadable job record", extra={"file": path.name})
                continue
            if job.status not in ACTIVE and job.status != "interrupted" and path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
                continue
            if job.status in ("running", "interrupted"):
                self._requeue_or_fail(job)
            self._jobs[job.id] = job

    def _requeue_or_fail(self, job: Job) -> None:
        recoverable = (job.kind == "pull" and not job.request.get("token_given")) or self.input_path(job.id).exists()
        if recoverable and job.attempts < MAX_ATTEMPTS:
            job.notes.append(f"interrupted at {_now()} (server stopped or killed); queued again")
            job.status = "queued"
        else:
            job.status = "interrupted"
            reason = "its bearer token is never stored: submit it again" if job.kind == "pull" else \
                "it failed too often" if job.attempts >= MAX_ATTEMPTS else "its input is gone"
            job.error = outcome(f"the job was interrupted and cannot resume: {reason}", "incomplete")
        self._save(job)

    # -- persistence -----------------------------------------------------------------------------
    def input_path(self, job_id: str) -> Path:
        """Where an upload's body is kept until its ingest completes."""
        return self.dir / f"{job_id}.input"

    def _save(self, job: Job) -> None:
        if job.kind == "ask":
            return
        path = self.dir / f"{job.id}.json"
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as handle:
            handle.write(orjson.dumps(asdict(job), default=str))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        fd = os.open(self.dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    # -- submitting and reading ------------------------------------------------------------------
    def new_id(self) -> str:
        """A fresh job id (unguessable: ids are not secrets, but need not be enumerable)."""
        return uuid.uuid4().hex

    def submit_ingest(self, job: Job, secrets: dict[str, str] | None = None) -> Job:
        """Persist and queue an ingest or pull job (its input file, if any, is already written)."""
        with self._lock:
            if self._stopping:
                raise ApiError(503, "the server is shutting down", headers={"Retry-After": "5"})
            if secrets:
                self._secrets[job.id] = secrets
            self._jobs[job.id] = job
            self._save(job)
            self._lock.notify_all()
        return job

    def submit_ask(self, job: Job, work: Callable[[], Awaitable[Any]]) -> Job:
        """Run an asynchronous question as an asyncio task; its record lives in memory."""
        self._prune_asks()
        job.status = "running"
        job.started = _now()
        self._jobs[job.id] = job

        async def run() -> None:
            try:
                job.result = await work()
                job.status = "completed"
            except ApiError as exc:
                job.status, job.error = "failed", outcome(exc.diagnostics, exc.code)
            except FhirqaError as exc:
                job.status, job.error = "failed", outcome(str(exc))
            except Exception:
                log.exception("asynchronous question failed", extra={"job": job.id})
                job.status, job.error = "failed", outcome("internal error; the server log has the details", "exception")
            finally:
                job.finished = _now()

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return job

    def _prune_asks(self) -> None:
        cutoff = time.time() - KEEP_ASK_S
        with self._lock:
            for job_id in [j.id for j in self._jobs.values() if j.kind == "ask" and j.finished
                           and datetime.fromisoformat(j.finished).timestamp() < cutoff]:
                del self._jobs[job_id]

    def get(self, job_id: str) -> Job | None:
        """A job by id."""
        return self._jobs.get(job_id)

    def all(self) -> list[Job]:
        """Every job, newest first."""
        return sorted(self._jobs.values(), key=lambda j: j.created, reverse=True)

    async def wait(self, job_id: str, timeout_s: float) -> Job:
        """Wait until the job leaves queued/running, or ``timeout_s`` passes (it is returned either way)."""
        deadline = time.monotonic() + timeout_s
        delay = 0.02
        job = self._jobs[job_id]
        while job.status in ACTIVE and time.monotonic() < deadline:
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 0.25)
        return job

    # -- the writer thread -----------------------------------------------------------------------
    def _next(self) -> Job | None:
        with self._lock:
            while not self._stopping:
                queued = [j for j in self._jobs.values() if j.kind != "ask" and j.status == "queued"]
                if queued:
                    job = min(queued, key=lambda j: j.created)
                    job.status, job.started, job.attempts = "running", _now(), job.attempts + 1
                    self._save(job)
                    return job
                self._lock.wait(1.0)
            return None

    def _writer(self) -> None:
        while (job := self._next()) is not None:
            try:
                self._run_ingest(job)
            except Exception:  # the writer must survive any one job
                log.exception("ingest job crashed", extra={"job": job.id})
                self._finish(job, "failed", error=outcome("internal error; the server log has the details",
                                                          "exception"))

    def _run_ingest(self, job: Job) -> None:
        def progress(count: int) -> None:
            job.progress = count

        while True:
            try:
                source = job_source(job.kind, job.request, self.input_path(job.id), job.id,
                                    self._secrets.get(job.id, {}))
                report = ingest([source], self.db, strict=bool(job.request.get("strict")), progress=progress)
            except StoreError as exc:
                if "another fhirqa process" in str(exc) and not self._stopping:
                    time.sleep(LOCK_RETRY_S)  # a CLI ingest holds the lock: the queue waits its turn
                    continue
                self._finish(job, "failed", error=outcome(str(exc), "transient"))
                return
            except FhirqaError as exc:
                self._finish(job, "failed", error=outcome(str(exc), "invalid"))
                return
            break
        if self.on_commit is not None:
            self.on_commit()
        result = report.as_dict()
        if result.get("quarantine"):  # relative to the store: the server's file layout is not the client's business
            quarantine = Path(result["quarantine"])
            result["quarantine"] = str(quarantine.relative_to(self.db)) if quarantine.is_relative_to(self.db) \
                else quarantine.name
        self._finish(job, "completed", result=result)

    def _finish(self, job: Job, status: str, *, result: Any = None, error: dict[str, Any] | None = None) -> None:
        with self._lock:
            job.status, job.result, job.error, job.finished = status, result, error, _now()
            if result is not None:
                job.progress = sum(result.get("read", {}).values()) + int(result.get("rejected", 0))
            self._save(job)  # "completed" reaches the disk only now: after the store's commit
            self._secrets.pop(job.id, None)
        self.input_path(job.id).unlink(missing_ok=True)
