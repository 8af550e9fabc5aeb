"""`kvtui whatif`: KV tokens and concurrency per dtype, from a log or from a model and a pool size.

Module-level imports stay stdlib-only so `kvtui --help` is fast and never pulls in Textual.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from-log", metavar="FILE", help="SGLang log (.gz ok; - for stdin)")
    p.add_argument("--model", metavar="M",
                   help="preset (HF id, short name or served path), config.json or model dir")
    p.add_argument("--dtype", action="append", metavar="D",
                   help="target KV dtype (repeatable; default bf16 fp8_e4m3 fp8_e5m2 mxfp8 nvfp4)")
    p.add_argument("--context", action="append", type=int, metavar="N",
                   help="request length for the concurrency columns (repeatable; default "
                        "context_len, 32768, 131072)")
    p.add_argument("--json", action="store_true", help="print the whatif object as JSON")
    p.add_argument("--tp", type=int, metavar="N", help="tensor parallel size (overrides the log)")
    p.add_argument("--attn-dp", type=int, metavar="N", help="attention DP size (DP-attention)")
    p.add_argument("--page-size", type=int, metavar="N", help="SGLang page size")
    p.add_argument("--pool-gib", type=float, metavar="G",
                   help="KV bytes per GPU in GiB (K + V), without a log")
    p.add_argument("--tokens", type=int, metavar="N", help="current pool tokens, without a log")
    p.add_argument("--current-dtype", metavar="D", help="current KV dtype (default bf16)")
    p.add_argument("--context-len", type=int, metavar="N",
                   help="the server's context_len (default: the log, else the model's max)")
    p.add_argument("--mem-fraction-static", type=float, metavar="F",
                   help="what-if for another mem_fraction_static (needs the log's memory lines)")
    p.add_argument("--target-concurrency", type=float, metavar="X",
                   help="inverse: what fits X requests of context_len in the first --dtype")
    p.add_argument("--no-explain", action="store_true", help="omit the show-your-work lines")


def _dtypes(raw: list[str] | None) -> list[str] | None:
    from kvtui.core import dtypes
    from kvtui.core.capacity.cell import ELEM_BYTES

    if not raw:
        return None
    out = []
    for d in raw:
        for part in d.split(","):
            name = dtypes.normalize(part)
            if name not in ELEM_BYTES:
                raise ValueError(f"--dtype {part!r}: choose from {', '.join(sorted(ELEM_BYTES))}")
            out.append(name)
    return out


def _calculator(args: argparse.Namespace) -> Any:
    from kvtui.core import capacity, dtypes
    from kvtui.core.capacity import Calculator, Parallel

    overrides = {k: v for k, v in (("tp", args.tp), ("attn_dp", args.attn_dp),
                                   ("page_size", args.page_size),
                                   ("context_len", args.context_len)) if v}
    if args.from_log:
        from kvtui.core.pipeline import analyse
        from kvtui.sources.readers import check_readable, log_input

        check_readable(args.from_log)
        session = analyse([log_input(args.from_log)])[0]
        engine = session.engine
        calc = (engine.calculator(session.state.current, args.model, **overrides)
                if engine is not None else None)
        if calc is None:
            raise ValueError(f"{args.from_log}: no KV pool line and no capacity line found")
        return calc
    if args.pool_gib is None and args.tokens is None:
        raise ValueError("give --from-log FILE, or --model M --tp N --pool-gib G, or "
                         "--tokens N --current-dtype D")
    spec, reason = (capacity.resolve_model(args.model) if args.model else (None, "no --model"))
    if args.pool_gib is not None and spec is None:
        raise ValueError("--pool-gib needs --model (the cell size comes from the model)")
    cur = dtypes.normalize(args.current_dtype) or "bf16"
    par = Parallel(tp=args.tp or 1, attn_dp=args.attn_dp or 1)
    ctx = args.context_len or (spec.max_position_embeddings if spec else None)
    calc = Calculator(current_dtype=cur, tokens=args.tokens, context_len=ctx, parallel=par,
                      page_size=args.page_size or 1, spec=spec, spec_reason=reason,
                      pool_bytes=int(args.pool_gib * (1 << 30)) if args.pool_gib else None)
    if calc.tokens is None:
        calc.tokens = calc.tokens_for(cur)[0]
        calc.notes.append(f"current pool: {args.pool_gib} GiB per GPU (given)")
    return calc


def run(args: argparse.Namespace) -> int:
    from kvtui.sources.readers import LogOpenError

    try:
        wanted = _dtypes(args.dtype)
        calc = _calculator(args)
    except (LogOpenError, ValueError) as exc:
        print(f"kvtui: {exc}", file=sys.stderr)
        return 2
    report = calc.report(wanted, args.context)
    if args.mem_fraction_static is not None or (args.tp and args.from_log and calc.memory):
        report["budget_scenarios"] = [
            calc.scenario(d, tp=args.tp, mem_fraction_static=args.mem_fraction_static,
                          context_lengths=args.context)
            for d in (wanted or [calc.current_dtype])]
    if args.target_concurrency is not None and calc.context_len:
        from kvtui.core.capacity import inverse

        report["inverse"] = inverse(calc, (wanted or [calc.current_dtype])[0], calc.context_len,
                                    args.target_concurrency)
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n")
        return 0
    from kvtui.core.capacity.render import render_whatif_text

    text = render_whatif_text(report, explain=not args.no_explain)
    for row in report.get("budget_scenarios") or []:
        text += (f"budget what-if ({row['dtype']}, TP {row.get('tp', calc.parallel.tp)}, "
                 f"mem_fraction_static {row.get('mem_fraction_static', '-')}): "
                 f"{row['tokens'] if row['tokens'] is not None else '-'} tokens; "
                 f"{row['basis']}\n")
    sys.stdout.write(text)
    return 0
