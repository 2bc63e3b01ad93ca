"""Load benchmark of the fhirqa server: offline ``$ask`` on the example patients over loopback.

    python bench/server_load.py [--db DIR] [--requests 320] [--concurrency 1,8,32] [--max-seconds 60]

Starts ``fhirqa serve --dev`` as a subprocess on a free 127.0.0.1 port over a store ingested from
``examples/sample`` (5 patients), takes the printed dev token, then runs a bounded async client
(httpx) at each concurrency: a fixed number of ``POST /Patient/{id}/$ask`` requests (FHIR
Parameters, explicit ``now``), spread over 5 patients x 12 questions. Two modes per level:

- ``fresh``: ``Cache-Control: no-cache``, so every request runs the question engine;
- ``cached``: the server's answer cache allowed (after one warm-up pass), the case of a UI or
  several clinicians asking the same questions of the same record as of the same instant.

Prints throughput (requests/s) and p50/p99 latency per level and mode. Loopback only; every loop is
bounded by --requests and --max-seconds. Target: p99 < 250 ms at 32 concurrent clients.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

import fhirqa

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "sample"
NOW = "2026-06-30T12:00:00Z"
QUESTIONS = [
    "What was the last A1c?", "Did potassium ever exceed 5.0 in the last year?", "How did the A1c change over the "
    "last 3 years?", "What was the last blood pressure?", "What medications is the patient on?",
    "When was the last encounter?", "What is the average LDL?", "What was the highest creatinine?",
    "Does the patient have diabetes?", "How many A1c results are there?", "What was the first weight?",
    "Has the patient had a flu vaccine?",
]


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(db: Path, port: int) -> tuple[subprocess.Popen[str], str]:
    """``fhirqa serve --dev`` with rate limits out of the way; returns the process and its dev token."""
    env = {**os.environ, "FHIRQA_SERVER_RATE_LIMIT_PER_MINUTE": "10000000", "FHIRQA_SERVER_RATE_LIMIT_BURST": "1000000",
           "FHIRQA_SERVER_LOG_LEVEL": os.environ.get("BENCH_LOG_LEVEL", "warning")}
    process = subprocess.Popen(  # noqa: S603 - our own server
        [sys.executable, "-m", "fhirqa.cli", "serve", "--db", str(db), "--port", str(port), "--dev"],
        stdout=subprocess.PIPE, stderr=open(os.environ.get("BENCH_SERVER_LOG", os.devnull), "w"), text=True, env=env)
    assert process.stdout is not None
    token = ""
    deadline = time.monotonic() + 60
    while not token and time.monotonic() < deadline:
        line = process.stdout.readline()
        if re.fullmatch(r"[\w-]+\.[\w-]+\.[\w-]+\n", line):
            token = line.strip()
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return process, token
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the server did not start")


class Connection:
    """One keep-alive HTTP/1.1 connection on asyncio streams: a client thin enough not to be the bottleneck.

    (httpx's pool costs more CPU per request than a cached answer does on the server, and client and
    server share the same two cores here.)
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> int:
        """POST and read the whole answer; returns the status code.

        A keep-alive connection the server closed while it sat idle (uvicorn closes after 5 s, e.g. while
        the warm-up builds a notes index) is opened again and the request sent once more, as HTTP clients
        do; ``$ask`` only reads.
        """
        try:
            return await self._post(path, body, headers)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, IndexError):
            await self.close()
            self.reader = self.writer = None
            return await self._post(path, body, headers)

    async def _post(self, path: str, body: bytes, headers: dict[str, str]) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Length: {len(body)}\r\n"
                          f"{head}\r\n".encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        await self.reader.readexactly(length)
        return int(status_line.split()[1])

    async def close(self) -> None:
        """Close the socket."""
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except ConnectionError:  # the server may reset an idle keep-alive first: nothing is lost
                pass


async def run_level(port: int, token: str, patients: list[str], concurrency: int, total: int, fresh: bool,
                    max_seconds: float) -> tuple[list[float], int, float]:
    """``total`` requests by ``concurrency`` clients; (latencies in ms, errors, wall seconds)."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"}
    if fresh:
        headers["Cache-Control"] = "no-cache"
    work = [(patients[i % len(patients)], QUESTIONS[(i // len(patients)) % len(QUESTIONS)]) for i in range(total)]
    latencies: list[float] = []
    errors = 0
    started = time.perf_counter()

    async def worker(offset: int) -> None:
        nonlocal errors
        connection = Connection("127.0.0.1", port)
        try:
            for patient, question in work[offset::concurrency]:
                if time.perf_counter() - started > max_seconds:
                    return
                body = json.dumps({"resourceType": "Parameters", "parameter": [
                    {"name": "question", "valueString": question}, {"name": "now", "valueDateTime": NOW}]}).encode()
                t0 = time.perf_counter()
                status = await connection.post(f"/Patient/{patient}/$ask", body, headers)
                latencies.append((time.perf_counter() - t0) * 1000)
                errors += status != 200
        finally:
            await connection.close()

    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    return latencies, errors, time.perf_counter() - started


def main() -> None:
    """Run the benchmark and print one line per concurrency level and mode."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, help="an existing store (default: ingest examples/sample into a temp dir)")
    parser.add_argument("--requests", type=int, default=320, help="requests per level and mode")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="time cap per level and mode")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "db"
        if args.db is None:
            fhirqa.ingest([fhirqa.FileSource([SAMPLE])], db)
        patients = [r[0] for r in fhirqa.Store(db).query("SELECT patient_id FROM patient ORDER BY 1").rows]
        port = free_port()
        process, token = start_server(db, port)
        try:
            # Warm-up: imports, DuckDB connection, and (for the cached mode) one answer per question.
            asyncio.run(run_level(port, token, patients, 4, len(patients) * len(QUESTIONS), False, args.max_seconds))
            print(f"{'clients':>7} {'mode':>6} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}")
            for level in (int(c) for c in args.concurrency.split(",")):
                for fresh in (True, False):
                    lat, errors, wall = asyncio.run(run_level(port, token, patients, level, args.requests, fresh,
                                                              args.max_seconds))
                    print(f"{level:>7} {'fresh' if fresh else 'cached':>6} {len(lat):>8} {len(lat) / wall:>8.1f} "
                          f"{statistics.median(lat):>8.1f} {percentile(lat, 0.99):>8.1f} {errors:>6}", flush=True)
        finally:
            process.terminate()
            process.wait(30)


if __name__ == "__main__":
    main()
