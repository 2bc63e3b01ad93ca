"""Ingest benchmark: fhirqa against what a user would otherwise reach for, in one run.

For each input scale (1x, 10x …) it runs, each in a fresh subprocess pinned to one core:
  fhirqa    `fhirqa.ingest` into a new store (parse, validate, flatten, map, merge, views, Parquet);
  fhir.resources   parsing every resource with the R4B pydantic models (parse only, no store);
  fhirpathpy       evaluating the same canonical ViewDefinitions with fhirpathpy (map only, no store;
                   on a time-bounded prefix, rate extrapolated).
and prints resources/second and peak memory (max RSS) for each, with medians over --repeat runs.

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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def make_input(source: Path, scale: int, out: Path) -> tuple[Path, int]:
    """``scale`` copies of the input bundles, every UUID remapped per copy so ids do not collide."""
    out.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in source.glob("*.json"))
    for copy in range(scale):
        namespace = uuid.UUID(int=copy + 1)
        for path in files:
            data = path.read_bytes()
            if copy:
                data = _UUID.sub(lambda m: str(uuid.uuid5(namespace, m.group(0).decode())).encode(), data)
            (out / f"{copy:03d}-{path.name}").write_bytes(data)
    count = sum(len(json.loads(p.read_bytes()).get("entry", [])) for p in files) * scale
    return out, count


WORKERS = {
    "fhirqa": """
import sys, fhirqa
from fhirqa.sources import FileSource
report = fhirqa.ingest([FileSource([sys.argv[1]])], sys.argv[2])
print(report.total_read)
""",
    "fhir.resources": """
import sys, orjson
from pathlib import Path
from fhir.resources.R4B import get_fhir_model_class
n = 0
for path in sorted(Path(sys.argv[1]).glob('*.json')):
    for entry in orjson.loads(path.read_bytes()).get('entry', []):
        res = entry['resource']
        get_fhir_model_class(res['resourceType']).model_validate(res)
        n += 1
print(n)
""",
    "fhirpathpy": """
import sys, time, orjson
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from naive_viewdef import load_views, run_naive
views = load_views(Path(sys.argv[3]).parent / 'mappings')
budget = float(sys.argv[4]); start = time.perf_counter(); n = 0
for path in sorted(Path(sys.argv[1]).glob('*.json')):
    for entry in orjson.loads(path.read_bytes()).get('entry', []):
        res = entry['resource']
        for view in views.get(res['resourceType'], []):
            run_naive(view, res)
        n += 1
    if time.perf_counter() - start > budget:
        break
print(n)
""",
}


def run_worker(name: str, folder: Path, budget: float) -> tuple[float, int, float]:
    """Seconds, resources processed and peak RSS (MB) of one worker run in a fresh process on one core."""
    db = Path(tempfile.mkdtemp(prefix="fhirqa-bench-db-"))
    code = WORKERS[name]
    pin = "import os; os.sched_setaffinity(0, {0})\n"
    peak = "\nimport resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    cmd = [sys.executable, "-c", pin + code + peak, str(folder), str(db), str(ROOT / "bench"), str(budget)]
    started = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    shutil.rmtree(db, ignore_errors=True)
    count, peak_kb = out.stdout.strip().splitlines()[-2:]
    return seconds, int(count), int(peak_kb) / 1024


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", default=str(ROOT.parent / "shared" / "data" / "synthea-r4"))
    parser.add_argument("--scales", default="1,10")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=float, default=20.0, help="seconds for the slow alternatives")
    parser.add_argument("--only", help="comma-separated subset of: " + ", ".join(WORKERS))
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(WORKERS)
    print(f"{'scale':>5} {'engine':<15} {'resources':>10} {'median s':>9} {'res/s':>9} {'peak MB':>8} {'vs fhirqa':>9}")
    for scale in [int(s) for s in args.scales.split(",")]:
        with tempfile.TemporaryDirectory(prefix="fhirqa-bench-in-") as tmp:
            folder, total = make_input(Path(args.input), scale, Path(tmp))
            fhirqa_rate = None
            for name in names:
                runs = [run_worker(name, folder, args.budget) for _ in range(args.repeat if name == "fhirqa" else 1)]
                seconds = statistics.median(r[0] for r in runs)
                count = runs[0][1]
                rate = count / seconds
                peak = max(r[2] for r in runs)
                if name == "fhirqa":
                    fhirqa_rate = rate
                ratio = f"{fhirqa_rate / rate:.1f}x" if fhirqa_rate and name != "fhirqa" else ""
                print(f"{scale:>4}x {name:<15} {count:>10,} {seconds:>9.2f} {rate:>9,.0f} {peak:>8,.0f} {ratio:>9}",
                      flush=True)
            del total
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
