"""Writes the fleet sample logs (issue 38): one log per server of small deployments, made with
the single-server generator's helpers (../generate.py, SGLang 0.5.9's format strings) so every
line is one a real server prints. Deterministic: same bytes every run.

Deployments:
- replicas: three Llama-3.1-70B replicas behind a router, two BF16 and one FP8 without scales
  (the "no scaling factors" warning of SGLang's model loader), the FP8 one loaded far above
  the others for minutes (usage and queue skew);
- pd: a prefill server with an FP8 KV cache (no scales) and page size 16, a decode server with
  BF16 and page size 1 whose log shows the transfer failures SGLang 0.5.23 prints
  (disaggregation/decode.py:2864 with the exception text of common/conn.py:116 and :313); and
  the same decode server's log opened after its start-up (only batches and failures), which
  must still read as SGLang's;
- nodes: one TP16 server over two nodes of eight whose logs were opened after the argument
  dump (each shows only its own ranks: node 1 TP8..TP15, as in sglang issue 4184);
- the pd pair's router (SGLang's router as the model gateway `smg` prints it: its start line
  and the error lines of src/routers/http/pd_router.rs, in the form of a real paste, see
  parsers/router.py): the decode's 500 for each request whose transfer the decode log shows
  failing, and a prefill 400 for a prompt over the context length (a request refused, not
  the pair failing).

`python sample_logs/fleet/generate.py [DIR]` rewrites them (default: this directory).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import sglang_samples as g  # noqa: E402  (the single-server generator, one directory up)

START = datetime(2026, 11, 30, 10, 0, 0)
MODEL = "meta-llama/Llama-3.1-70B-Instruct"
TOKENS_BF16 = 1_290_000
NO_SCALES = ("Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors "
             "of 1.0. This may lead to less accurate results!")


def _startup(log: g.Log, *, kv: str, ranks: list[str], tp: int, page_size: int = 1,
             disagg: str | None = None, dump: bool = True) -> int:
    """A Llama-3.1-70B start-up on `ranks` (0.5.9 format); the pool's tokens. `dump`: False
    for a log opened after the argument dump."""
    fp8 = kv.startswith("fp8")
    tokens = TOKENS_BF16 * (2 if fp8 else 1)
    over: dict[str, object] = {"tp_size": tp, "page_size": page_size,
                               "served_model_name": "llama-3.1-70b",
                               "kv_cache_dtype": "fp8_e4m3" if fp8 else "auto"}
    if disagg is not None:
        over["disaggregation_mode"] = disagg
    if dump:
        log.add(g.server_args_repr(g.base_server_args(MODEL, **over)))
    log.clock.tick(8)
    pre, usage = 78.68 * g.GIB, 16.43 * g.GIB
    for r in ranks:
        log.add(f"Load weight begin. avail mem={g.gb(pre)} GB", r)
    log.clock.tick(40)
    if kv == "fp8":
        for r in ranks:
            log.add(NO_SCALES, r)
    for r in ranks:
        log.add(f"Load weight end. elapsed=40.10 s, type=LlamaForCausalLM, dtype=torch.bfloat16,"
                f" avail mem={g.gb(pre - usage)} GB, mem usage={g.gb(usage)} GB.", r)
    log.add("Using KV cache dtype: " + ("torch.float8_e4m3fn" if fp8 else "torch.bfloat16"),
            ranks[0])
    elem = 1 if fp8 else 2
    # Llama-3.1-70B: 8 KV heads of 128 over 80 layers, max(1, 8 // tp) heads per rank
    k_bytes = (tokens + 1) * max(1, 8 // tp) * 128 * 80 * elem
    for r in ranks:
        log.add(f"KV Cache is allocated. #tokens: {tokens}, K size: {g.gb(k_bytes)} GB, V size: "
                f"{g.gb(k_bytes)} GB", r)
    g._finish_startup(log, ranks, pool_end=40 * g.GIB, tokens=tokens, ctx=131072,
                      graph=(20, 19.7, 1.1))
    return tokens


def _load(log: g.Log, rng: random.Random, *, steps: int, usage: tuple[float, float],
          queue: tuple[int, int], rank: str | None, pool: int,
          failures: dict[int, str] | None = None) -> None:
    """`steps` decode lines two seconds apart with KV usage and queue drawn from the ranges;
    `failures`: step -> a transfer failure line printed after that step's batch line."""
    for step in range(steps):
        log.clock.tick(2.0)
        u = rng.uniform(*usage)
        running = rng.randint(20, 60)
        log.add(g.decode_line("0.5.9", running=running, tokens=int(pool * u), usage=u,
                              gen=running * 35.0, queue=rng.randint(*queue)), rank)
        if failures and step in failures:
            log.add(failures[step], rank)


def replica(kv: str, seed: int, *, hot: bool = False) -> str:
    rng = random.Random(seed)
    log = g.Log(g.Clock(START))
    ranks = [f"TP{i}" for i in range(8)]
    pool = _startup(log, kv=kv, ranks=ranks, tp=8)
    _load(log, rng, steps=120, usage=(0.85, 0.95) if hot else (0.20, 0.35),
          queue=(20, 40) if hot else (0, 2), rank="TP0", pool=pool)
    return log.text()


def _decode_failure(room: int) -> str:
    # decode.py:2864 + the exception text of common/conn.py:116 with the reason of :313
    return (f"Decode transfer failed for request rank=0 decode_req.req.rid='req-{room}' "
            f"decode_req.req.bootstrap_room={room} with exception KVTransferError("
            f"bootstrap_room={room}): Failed to get kvcache from prefill instance, it might "
            "be dead")


def pd_prefill() -> str:
    rng = random.Random(19398)
    log = g.Log(g.Clock(START))
    ranks = [f"TP{i}" for i in range(4)]
    pool = _startup(log, kv="fp8", ranks=ranks, tp=4, page_size=16, disagg="prefill")
    for _ in range(30):
        log.clock.tick(2.0)
        log.add(g.prefill_line("0.5.9", new_seq=4, new_tok=8192, cached=0,
                               usage=rng.uniform(0.1, 0.3), running=0, queue=2,
                               throughput=9000.0), "TP0")
    del pool
    return log.text()


def pd_decode(startup: bool = True) -> str:
    """`startup` False: the log was opened after the server came up (only batches and
    failures)."""
    rng = random.Random(19399)
    log = g.Log(g.Clock(START))
    if startup:
        _startup(log, kv="bf16", ranks=[f"TP{i}" for i in range(4)], tp=4, page_size=1,
                 disagg="decode")
    else:
        log.clock.tick(90)
    _load(log, rng, steps=30, usage=(0.3, 0.5), queue=(0, 3), rank="TP0", pool=TOKENS_BF16,
          failures={5: _decode_failure(4101), 17: _decode_failure(4177)})
    return log.text()


_SMG = "/home/runner/work/sglang/sglang/src"


def _router_line(at: datetime, level: str, rid: str, where: str, text: str) -> str:
    span = (f'http_request{{method=POST uri=/v1/chat/completions version=HTTP/1.1 '
            f'module="smg" request_id="{rid}"}}')
    return f"{at:%Y-%m-%d %H:%M:%S} {level:>5} {span}: {where}: {text}"


def pd_router() -> str:
    """The router in front of pd-prefill-fp8.log and pd-decode-bf16.log (on hosts gpu-p and
    gpu-d, port 30000 each): its decode 500s at the decode log's two transfer failures."""
    lines = [f"{START:%Y-%m-%d %H:%M:%S}  INFO smg::server: {_SMG}/server.rs:794: "
             "Starting router on 0.0.0.0:8000 | mode: PrefillDecode { prefill_urls: "
             '[("http://gpu-p:30000", Some(8998))], decode_urls: ["http://gpu-d:30000"], '
             "prefill_policy: None, decode_policy: None } | policy: CacheAware { "
             "cache_threshold: 0.3 } | max_payload: 512MB"]
    pd = f"smg::routers::http::pd_router: {_SMG}/routers/http/pd_router.rs"
    for i, second in enumerate((60, 80, 104)):
        at = START + timedelta(seconds=second)
        rid = f"chatcmpl-{4101 + i * 38:06d}"
        lines.append(_router_line(at, "INFO", rid, f"smg::request: {_SMG}/middleware.rs:310",
                                  "started processing request"))
        if i == 0:  # a prompt over the context length: refused, the pair did not fail (the
            # paste shows no prefill line: its pd_router.rs line number here is made up)
            lines.append(_router_line(
                at, "ERROR", rid, f"{pd}:541",
                "Prefill server returned error status prefill_url=http://gpu-p:30000 "
                'status=400 Bad Request body={"error":{"message":"The input (140000 tokens) '
                "is longer than the model's context length (131072 tokens).\"}}"))
            continue
        lines.append(_router_line(
            at, "ERROR", rid, f"{pd}:590",
            "Decode server returned error status decode_url=http://gpu-d:30000 "
            "status=500 Internal Server Error"))
    return "\n".join(lines) + "\n"


def node(rank_offset: int) -> str:
    rng = random.Random(16 + rank_offset)
    log = g.Log(g.Clock(START))
    ranks = [f"TP{rank_offset + i}" for i in range(8)]
    pool = _startup(log, kv="bf16", ranks=ranks, tp=16, dump=False)
    if rank_offset == 0:  # only the stats-logging rank prints batches
        _load(log, rng, steps=20, usage=(0.2, 0.4), queue=(0, 1), rank="TP0", pool=pool)
    return log.text()


SAMPLES = {
    "replica-a-bf16.log": lambda: replica("bf16", 1),
    "replica-b-bf16.log": lambda: replica("bf16", 2),
    "replica-c-fp8-unscaled.log": lambda: replica("fp8", 3, hot=True),
    "pd-prefill-fp8.log": pd_prefill,
    "pd-decode-bf16.log": pd_decode,
    "pd-decode-bf16-nostart.log": lambda: pd_decode(startup=False),
    "node0-tp16.log": lambda: node(0),
    "node1-tp16.log": lambda: node(8),
    "pd-router.log": pd_router,
}


def render_all() -> Iterator[tuple[str, str]]:
    for name, make in SAMPLES.items():
        yield name, make()


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else HERE
    for name, text in render_all():
        (out / name).write_text(text, encoding="utf-8")
        print(f"{name}: {text.count(chr(10))} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
