"""Ingest benchmark: fhirqa against what a user would otherwise reach for, at several input scales.

For each input scale (1x, 10x …: copies of the input bundles with every UUID remapped per copy) it runs,
each in a fresh subprocess pinned to one core:
  fhirqa           `fhirqa.ingest` into a new store (parse, validate, flatten, map, merge, views, Parquet);
  fhirqa-python    the same with the optional C walks switched off (FHIRQA_PURE_PYTHON=1);
  fhirqa-all-cores not pinned: files read by one process per core (workers=None, `fhirqa ingest`'s
                   default); its CPU column adds the worker processes' CPU;
  fhirqa-again     the same input ingested a second time into that store (nothing changes: the
                   incremental path); only the second ingest is timed;
  fhirqa-add       one more patient (a copy of the first bundle under new UUIDs) ingested into the
                   store of the whole input: the daily-load case; only that ingest is timed (its
                   res/s is the new patient's resources over its time, to compare with a full load);
  fhir.resources   parsing every resource with the R4B pydantic models (parse only, no store);
  fhirpathpy       evaluating the same canonical ViewDefinitions with fhirpathpy (map only, no store),
                   on the files that fit in --budget seconds; its rate is extrapolated from that prefix.

Columns: ``total s`` is the whole subprocess (interpreter start and imports included; for
fhirqa-again also the first ingest), ``work s``/``cpu s`` the timed work inside it (every engine's
modules are imported before the clock starts, as ``fhir.resources`` and ``fhirpathpy`` are; fhirqa's
mappings are compiled inside it) (wall, and CPU time of
all its threads), ``res/s`` = resources / work s, ``res/s cpu`` = resources / cpu s (the number to trust
on a busy machine), ``peak MB`` the subprocess's maximum resident memory (kernel's count, wait4),
``fhirqa x`` how many times fhirqa's res/s is the engine's. Medians over --repeat runs (peak: the
maximum). A summary puts the scales side by side.

    python bench/ingest_bench.py --input ../shared/data/synthea-r4 --scales 1,10 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def make_input(source: Path, scale: int, out: Path) -> tuple[Path, int]:
    """``scale`` copies of the input bundles, every UUID remapped per copy so ids do not collide.

    Returns the folder and the number of bundle entries in it.
    """
    out.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in source.glob("*.json"))
    if not files:
        raise SystemExit(f"{source}: no *.json bundles")
    for copy in range(scale):
        namespace = uuid.UUID(int=copy + 1)

        def remap(match: re.Match[bytes], namespace: uuid.UUID = namespace) -> bytes:
            return str(uuid.uuid5(namespace, match.group(0).decode())).encode()

        for path in files:
            data = path.read_bytes()
            if copy:
                data = _UUID.sub(remap, data)
            (out / f"{copy:03d}-{path.name}").write_bytes(data)
    count = sum(len(json.loads(p.read_bytes()).get("entry", [])) for p in files) * scale
    return out, count


# Each worker prints one JSON line last: {"count": resources processed, "seconds": wall, "cpu": CPU s}.
# CPU counts the worker's own threads and the child processes it waited for (fhirqa-all-cores).
_TIMER = """
import json, os, time
def _cpu():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
def _timed(work):
    wall, cpu = time.perf_counter(), _cpu()
    count = work()
    print(json.dumps({"count": count, "seconds": time.perf_counter() - wall, "cpu": _cpu() - cpu}))
"""

WORKERS = {
    "fhirqa": """
import sys, fhirqa, fhirqa.store
from fhirqa.sources import FileSource
_timed(lambda: fhirqa.ingest([FileSource([sys.argv[1]])], sys.argv[2]).total_read)
""",
    # The same with the C walks switched off: what the optional extension is worth.
    "fhirqa-python": """
import os, sys
os.environ["FHIRQA_PURE_PYTHON"] = "1"
import fhirqa, fhirqa.store
from fhirqa.sources import FileSource
_timed(lambda: fhirqa.ingest([FileSource([sys.argv[1]])], sys.argv[2]).total_read)
""",
    # Not pinned: the files read by as many processes as the machine has cores (`fhirqa ingest` default).
    "fhirqa-all-cores": """
import sys, fhirqa, fhirqa.store
from fhirqa.sources import FileSource
_timed(lambda: fhirqa.ingest([FileSource([sys.argv[1]])], sys.argv[2], workers=None).total_read)
""",
    "fhirqa-again": """
import sys, fhirqa
from fhirqa.sources import FileSource
first = fhirqa.ingest([FileSource([sys.argv[1]])], sys.argv[2])
def again():
    report = fhirqa.ingest([FileSource([sys.argv[1]])], sys.argv[2])
    assert not report.changed, "the same input twice changed the store"
    return report.total_read
_timed(again)
""",
    "fhirqa-add": """
import sys, tempfile, uuid, fhirqa
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from ingest_bench import _UUID
from fhirqa.sources import FileSource
fhirqa.ingest([FileSource([sys.argv[1]])], sys.argv[2])
first = sorted(Path(sys.argv[1]).glob('*.json'))[0]
extra = Path(tempfile.mkdtemp()) / 'new-patient.json'
namespace = uuid.uuid4()
extra.write_bytes(_UUID.sub(lambda m: str(uuid.uuid5(namespace, m.group(0).decode())).encode(), first.read_bytes()))
def add():
    report = fhirqa.ingest([FileSource([extra])], sys.argv[2])
    assert report.changed and not report.removed, "a new patient replaced stored resources"
    return report.total_read
_timed(add)
""",
    "fhir.resources": """
import sys, orjson
from pathlib import Path
from fhir.resources.R4B import get_fhir_model_class
def work():
    n = 0
    for path in sorted(Path(sys.argv[1]).glob('*.json')):
        for entry in orjson.loads(path.read_bytes()).get('entry', []):
            res = entry['resource']
            get_fhir_model_class(res['resourceType']).model_validate(res)
            n += 1
    return n
_timed(work)
""",
    "fhirpathpy": """
import sys, time, orjson
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from naive_viewdef import load_views, run_naive
views = load_views(Path(sys.argv[3]).parent / 'mappings')
def work():
    budget = float(sys.argv[4]); start = time.perf_counter(); n = 0
    for path in sorted(Path(sys.argv[1]).glob('*.json')):
        for entry in orjson.loads(path.read_bytes()).get('entry', []):
            res = entry['resource']
            for view in views.get(res['resourceType'], []):
                run_naive(view, res)
            n += 1
        if time.perf_counter() - start > budget:
            break
    return n
_timed(work)
""",
}


@dataclass
class Run:
    """One worker run."""

    count: int  # resources the worker processed
    total: float  # seconds of the whole subprocess
    seconds: float  # seconds of the timed work
    cpu: float  # CPU seconds of the timed work (all threads)
    peak_mb: float  # maximum resident set of the subprocess


def _one_core() -> int:
    """A core this process may run on (the first allowed one, not blindly core 0)."""
    return min(os.sched_getaffinity(0))


def run_worker(name: str, folder: Path, budget: float) -> Run:
    """One worker run in a fresh process pinned to one core (except ``*-all-cores``); peak memory from wait4."""
    db = Path(tempfile.mkdtemp(prefix="fhirqa-bench-db-")) / "store"
    pin = "" if name.endswith("-all-cores") else f"import os; os.sched_setaffinity(0, {{{_one_core()}}})\n"
    code = pin + _TIMER + WORKERS[name]
    cmd = [sys.executable, "-c", code, str(folder), str(db), str(ROOT / "bench"), str(budget)]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        total = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    shutil.rmtree(db.parent, ignore_errors=True)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed (exit {proc.returncode}):\n{stderr[-4000:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    return Run(result["count"], total, result["seconds"], result["cpu"], usage.ru_maxrss / 1024)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table per scale and a side-by-side summary."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", default=str(ROOT.parent / "shared" / "data" / "synthea-r4"))
    parser.add_argument("--scales", default="1,10")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each fhirqa engine (median)")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds for fhirpathpy")
    parser.add_argument("--only", help="comma-separated subset of: " + ", ".join(WORKERS))
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(WORKERS)
    unknown = set(names) - set(WORKERS)
    if unknown:
        parser.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    scales = [int(s) for s in args.scales.split(",")]
    header = (f"{'scale':>5} {'engine':<17} {'resources':>10} {'total s':>8} {'work s':>8} {'cpu s':>8} "
              f"{'res/s':>8} {'res/s cpu':>9} {'peak MB':>8} {'fhirqa x':>8}")
    print(header)
    summary: dict[str, dict[int, tuple[float, float, float]]] = {}
    for scale in scales:
        with tempfile.TemporaryDirectory(prefix="fhirqa-bench-in-") as tmp:
            folder, expected = make_input(Path(args.input), scale, Path(tmp))
            fhirqa_rate = None
            for name in names:
                repeat = args.repeat if name.startswith("fhirqa") else 1
                runs = [run_worker(name, folder, args.budget) for _ in range(repeat)]
                count = runs[0].count
                total = statistics.median(r.total for r in runs)
                seconds = statistics.median(r.seconds for r in runs)
                cpu = statistics.median(r.cpu for r in runs)
                peak = max(r.peak_mb for r in runs)
                if name == "fhirpathpy" and count < expected:
                    # A prefix was timed: scale its work to the whole input, keep start-up as measured.
                    startup = total - seconds
                    seconds, cpu = seconds * expected / count, cpu * expected / count
                    total, note = startup + seconds, f"  (extrapolated from {count:,})"
                    count = expected
                elif name == "fhirqa-add":
                    note = "  (one new patient into the store of the whole input)"
                else:
                    note = "" if count == expected else f"  (input has {expected:,})"
                rate = count / seconds
                if name == "fhirqa":
                    fhirqa_rate = rate
                ratio = f"{fhirqa_rate / rate:.1f}x" if fhirqa_rate and name != "fhirqa" else ""
                print(f"{scale:>4}x {name:<17} {count:>10,} {total:>8.2f} {seconds:>8.2f} {cpu:>8.2f} "
                      f"{rate:>8,.0f} {count / cpu:>9,.0f} {peak:>8,.0f} {ratio:>8}{note}", flush=True)
                summary.setdefault(name, {})[scale] = (rate, count / cpu, peak)
    if len(scales) > 1:
        print()
        cells = "".join(f" {f'{s}x res/s':>10} {f'{s}x cpu':>9} {f'{s}x MB':>8}" for s in scales)
        print(f"{'engine':<17}{cells} {'MB growth':>9}")
        for name, by_scale in summary.items():
            cells = "".join(
                f" {by_scale[s][0]:>10,.0f} {by_scale[s][1]:>9,.0f} {by_scale[s][2]:>8,.0f}" for s in scales
            )
            growth = by_scale[scales[-1]][2] / by_scale[scales[0]][2]
            print(f"{name:<17}{cells} {growth:>8.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
