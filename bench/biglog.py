"""Make large, realistic SGLang runtime logs for the benchmarks (deterministic).

A real startup (the Qwen3.5 FP8 sample's header) followed by runtime traffic in the 0.5.9+
format: about 85% decode lines, the rest prefill and uvicorn HTTP access lines.
"""

from __future__ import annotations

import random
import sys
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "sample_logs"))

from sglang_samples import access_line, decode_line, prefill_line, qwen35  # noqa: E402


def write_big_log(path: Path, n_lines: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    header = [ln for ln in qwen35("fp8", fmt="0.5.10", seed=35).splitlines()
              if "batch" not in ln and "HTTP/1.1" not in ln]
    t = datetime(2026, 11, 24, 10, 0, 0)
    pool, slots = 608174, 174
    running, queue, tokens = 8, 0, 100000
    with path.open("w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n")
        written = len(header)
        buf: list[str] = []
        while written < n_lines:
            t += timedelta(milliseconds=rng.randint(5, 60))
            stamp = t.strftime("[%Y-%m-%d %H:%M:%S")
            r = rng.random()
            if r < 0.85:
                tokens = max(1000, min(pool - 1, tokens + rng.randint(-3000, 3000)))
                running = max(1, min(58, running + rng.randint(-2, 2)))
                queue = max(0, queue + rng.randint(-1, 1))
                buf.append(f"{stamp} TP0] " + decode_line(
                    "0.5.9", running=running, tokens=tokens, usage=tokens / pool,
                    gen=running * rng.uniform(28.0, 42.0), queue=queue,
                    mamba=(running, running / slots)))
            elif r < 0.93:
                buf.append(f"{stamp} TP0] " + prefill_line(
                    "0.5.10", new_seq=rng.randint(1, 6), new_tok=rng.randint(100, 8192),
                    cached=rng.randint(0, 60000), usage=tokens / pool, running=running,
                    queue=queue, throughput=rng.uniform(4000, 16000),
                    mamba_usage=running / slots))
            else:
                buf.append(f"{stamp}] " + access_line(rng))
            written += 1
            if len(buf) >= 10000:
                f.write("\n".join(buf) + "\n")
                buf.clear()
        if buf:
            f.write("\n".join(buf) + "\n")
    return path


if __name__ == "__main__":
    out = Path(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
    write_big_log(out, n)
    print(out)
