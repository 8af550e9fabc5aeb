"""`kvtui whatif`: KV tokens and concurrency per dtype, from a log or from a model and a pool size.

Module-level imports stay stdlib-only so `kvtui --help` is fast and never pulls in Textual.
Numeric options are read as text and checked here, so a value that makes no sense (`--tp 0`,
`--context -5`, `--mem-fraction-static 1.2`, an unknown dtype) gives one clear line and exit 2
instead of argparse's usage block or a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kvtui.core.engine import release_options
from kvtui.core.engine_names import ENGINE_MODULES, first_name

if TYPE_CHECKING:  # module-level imports stay stdlib-only (above)
    from kvtui.core.capacity.calculator import Calculator


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from-log", metavar="FILE",
                   help="an SGLang or vLLM log (.gz ok; - for stdin): its engine's sizing applies")
    p.add_argument("--engine", choices=ENGINES, default=None,
                   help="without a log: whose sizing applies (default sglang, or the engine "
                        "of --vllm-version / --sglang-version)")
    p.add_argument("--model", metavar="M",
                   help="preset (HF id, short name or served path), config.json or model dir")
    p.add_argument("--dtype", action="append", metavar="D",
                   help="target KV dtype (repeatable; default SGLang: bf16 fp8_e4m3 fp8_e5m2 "
                        "mxfp8 nvfp4, vLLM: bf16 fp8_e4m3 fp8_e5m2 nvfp4)")
    p.add_argument("--context", action="append", metavar="N",
                   help="request length for the concurrency columns (repeatable; default "
                        "context_len, 32768, 131072)")
    p.add_argument("--json", action="store_true", help="print the whatif object as JSON")
    p.add_argument("--tp", metavar="N", help="tensor parallel size (overrides the log)")
    p.add_argument("--attn-dp", metavar="N", help="attention DP size (DP-attention)")
    p.add_argument("--page-size", metavar="N", help="SGLang page size (vLLM: --block-size)")
    p.add_argument("--pool-gib", metavar="G",
                   help="KV bytes per GPU in GiB (K + V), without a log")
    p.add_argument("--tokens", metavar="N", help="current pool tokens, without a log")
    p.add_argument("--current-dtype", metavar="D", help="current KV dtype (default bf16)")
    p.add_argument("--context-len", metavar="N",
                   help="the server's context_len (default: the log, else the model's max)")
    p.add_argument("--mem-fraction-static", metavar="F",
                   help="what-if for another mem_fraction_static in (0, 1) (needs the log's "
                        "memory lines)")
    p.add_argument("--kv-cache-memory-bytes", metavar="N",
                   help="vLLM: what-if for a run started with --kv-cache-memory-bytes N (KV "
                        "bytes per GPU, whatever the TP; vLLM's syntax: 52613349376, 49G = "
                        "49 x 2^30, 52.6g = 52.6 x 10^9); on a profiled run N replaces the "
                        "profiled budget")
    p.add_argument("--max-num-batched-tokens", metavar="N",
                   help="vLLM: the scheduler's batch tokens (default: the log's, else vLLM's "
                        "API-server default); sliding-window and chunked-attention groups "
                        "reserve them per request")
    p.add_argument("--target-tp", metavar="N",
                   help="what-if for another TP with the log's memory lines (--tp re-reads the "
                        "log's layout instead)")
    p.add_argument("--target-concurrency", metavar="X",
                   help="inverse: what fits X requests of context_len in the first --dtype")
    for option in release_options():  # each engine's (`--sglang-version`, ...)
        p.add_argument(option.flag, metavar="X", help=option.help)
    p.add_argument("--no-explain", action="store_true", help="omit the show-your-work lines")


def _positive_int(name: str, raw: str | None) -> int | None:
    from kvtui.core.capacity.options import positive_int

    return positive_int(name, raw)


def _positive_float(name: str, raw: str | None, *, below_one: bool = False) -> float | None:
    from kvtui.core.capacity.options import positive_float

    return positive_float(name, raw, below_one=below_one)


def _contexts(raw: list[str] | None) -> list[int] | None:
    """--context, as the TUI's lengths field reads it (128K = 131072): one check for both."""
    from kvtui.core.capacity.options import length

    return [length("--context", c) for c in raw] if raw else None


# The engines behind the seam, by name (`kvtui.core.engine_names`: building the parser imports
# no engine).
ENGINES = tuple(ENGINE_MODULES)


def _dtype(name: str, raw: str, engine: str) -> str:
    from kvtui.core import dtypes
    from kvtui.core.engine import load

    known = load(engine).kv_dtypes
    d = dtypes.normalize(raw)
    if d not in known:
        raise ValueError(f"{name} {raw!r}: not a KV dtype {load(engine).label} sizes; choose "
                         "from " + ", ".join(sorted(known)))
    return str(d)


def _dtypes(raw: list[str] | None, engine: str) -> list[str] | None:
    if not raw:
        return None
    return [_dtype("--dtype", part, engine) for d in raw for part in d.split(",")
            if part.strip()]


def _release(args: argparse.Namespace, engine: str) -> str | None:
    """The pinned release of `engine` (checked by it), from its own flag; the other engine's
    flag is an error, since it would be silently ignored."""
    from kvtui.core.engine import load

    options = dict(zip(ENGINES, release_options(), strict=True))
    given = {name: getattr(args, option.dest, None) for name, option in options.items()}
    for name, raw in given.items():
        if raw and name != engine:
            raise ValueError(f"{options[name].flag}: the what-if is {load(engine).label}'s "
                             f"({options[engine].flag} pins its release)")
    raw = given[engine]
    return load(engine).check_release(raw) if raw else None


def _engine_wanted(args: argparse.Namespace) -> str:
    """The engine of a what-if without a log: --engine, else the one whose release is pinned,
    else the first engine (SGLang)."""
    if args.engine:
        return str(args.engine)
    pinned = [name for name, option in zip(ENGINES, release_options(), strict=True)
              if getattr(args, option.dest, None)]
    return pinned[0] if len(pinned) == 1 else first_name()


def validate(args: argparse.Namespace, engine: str | None = None) -> dict[str, Any]:
    """Every option checked and typed; ValueError (one line) on the first that makes no sense.
    `engine`: the engine the what-if is sized by (the log's; without a log `_engine_wanted`)."""
    engine = engine or _engine_wanted(args)
    out: dict[str, Any] = {
        "engine": engine,
        "tp": _positive_int("--tp", args.tp),
        "target_tp": _positive_int("--target-tp", args.target_tp),
        "attn_dp": _positive_int("--attn-dp", args.attn_dp),
        "page_size": _positive_int("--page-size", args.page_size),
        "tokens": _positive_int("--tokens", args.tokens),
        "context_len": _positive_int("--context-len", args.context_len),
        "pool_gib": _positive_float("--pool-gib", args.pool_gib),
        "mem_fraction_static": _positive_float("--mem-fraction-static",
                                               args.mem_fraction_static, below_one=True),
        "target_concurrency": _positive_float("--target-concurrency", args.target_concurrency),
        "contexts": _contexts(args.context),
        "dtypes": _dtypes(args.dtype, engine),
        "current_dtype": _dtype("--current-dtype", args.current_dtype, engine)
        if args.current_dtype else None,
        "release": _release(args, engine),
        "max_batched": _positive_int("--max-num-batched-tokens",
                                     getattr(args, "max_num_batched_tokens", None)),
    }
    if out["tp"] and out["attn_dp"] and out["tp"] % out["attn_dp"]:
        raise ValueError(f"--attn-dp {out['attn_dp']} must divide --tp {out['tp']}")
    return out


class Unrecognised(ValueError):
    """The log holds no line of any engine (`check` exits 3 for it: EXIT_UNRECOGNISED)."""


def _calculator(args: argparse.Namespace) -> tuple[Calculator, dict[str, Any]]:
    """(the what-if calculator, the checked options): the log's engine sizes a log's run; the
    engine `_engine_wanted` names sizes a plan."""
    from kvtui.core import capacity
    from kvtui.core.engine import load

    if args.from_log:
        from kvtui.core.pipeline import analyse
        from kvtui.sources.readers import check_readable, log_input

        validate(args)  # a wrong option is said before the log is read
        check_readable(args.from_log)
        session = analyse([log_input(args.from_log)])[0]
        engine = session.engine
        if engine is None:
            from kvtui.core.render import unrecognised_words

            # what `check` says of it (its Engine line), and its exit code
            raise Unrecognised(f"{args.from_log}: {unrecognised_words()}")
        if args.engine and args.engine != engine.name:
            raise ValueError(f"--engine {args.engine}: {args.from_log} is {engine.label}'s log")
        opt = validate(args, engine.name)
        overrides = {k: opt[k] for k in ("tp", "attn_dp", "page_size", "context_len")
                     if opt[k]}
        calc = engine.calculator(session.state.settled().current, args.model,
                                 release=opt["release"], **overrides)
        if calc is None:
            why = session.report().whatif_unmodelled
            raise ValueError(f"{args.from_log}: "
                             f"{why or 'no KV pool line and no capacity line found'}")
        return calc, opt
    opt = validate(args)
    if opt["pool_gib"] is None and opt["tokens"] is None:
        raise ValueError("give --from-log FILE, or --model M --tp N --pool-gib G, or "
                         "--tokens N --current-dtype D")
    spec, reason = (capacity.resolve_model(args.model) if args.model else (None, "no --model"))
    if opt["pool_gib"] is not None and spec is None:
        raise ValueError("--pool-gib needs --model (the cell size comes from the model)")
    calc = load(opt["engine"]).plan(
        spec, reason, current_dtype=opt["current_dtype"] or "bf16", tokens=opt["tokens"],
        context_len=opt["context_len"] or (spec.max_position_embeddings if spec else None),
        tp=opt["tp"] or 1, attn_dp=opt["attn_dp"] or 1, page_size=opt["page_size"],
        pool_gib=opt["pool_gib"], release=opt["release"])
    return calc, opt


def _memory_knob(args: argparse.Namespace, opt: dict[str, Any],
                 calc: Calculator) -> tuple[Calculator, float | None]:
    """(the calculator of the budget what-if, the knob value it asks for): --mem-fraction-static
    on a run sized by a fraction, --kv-cache-memory-bytes on a vLLM run (the run read as sized
    by those bytes: vLLM reserves them on every GPU and profiles nothing). The report itself
    stays the run's as logged."""
    raw = getattr(args, "kv_cache_memory_bytes", None)
    knob = calc.memory_knob()
    if raw is None:
        if opt["mem_fraction_static"] is not None and knob.unit != "fraction":
            raise ValueError(f"this run's KV cache is sized by {knob.flag} (the engine ignores "
                             f"the memory fraction then): give {knob.flag} instead")
        return calc, opt["mem_fraction_static"]
    if opt["mem_fraction_static"] is not None:
        raise ValueError("give --mem-fraction-static or --kv-cache-memory-bytes, not both")
    by_bytes = calc.sized_by_kv_bytes()
    if by_bytes is None:
        raise ValueError("--kv-cache-memory-bytes is vLLM's flag: it needs a vLLM log "
                         "(--from-log)")
    calc = by_bytes
    from kvtui.core.capacity.options import memory_value

    value = memory_value(calc.memory_knob(), "--kv-cache-memory-bytes", str(raw))
    return calc, value


def run(args: argparse.Namespace) -> int:
    from kvtui.sources.readers import LogOpenError

    try:
        calc, opt = _calculator(args)
        if opt["max_batched"] is not None:
            with_batched = calc.with_max_batched(opt["max_batched"])
            if with_batched is None:
                raise ValueError("--max-num-batched-tokens is vLLM's flag (--engine vllm or a "
                                 "vLLM log)")
            calc = with_batched
        sizer, mf = _memory_knob(args, opt, calc)
    except (LogOpenError, ValueError) as exc:
        print(f"kvtui: {exc}", file=sys.stderr)
        if isinstance(exc, Unrecognised):
            from kvtui.core.gate import EXIT_UNRECOGNISED

            return EXIT_UNRECOGNISED
        return 2
    wanted, contexts = opt["dtypes"], opt["contexts"]
    report = calc.report(wanted, contexts)
    tp = opt["target_tp"]
    if mf is not None or tp is not None:
        report = replace(report, budget_scenarios=tuple(
            sizer.scenario(d, tp=tp, mem_fraction_static=mf, context_lengths=contexts)
            for d in (wanted or [calc.current_dtype])))
    appended = False
    inv = report.inverse
    if opt["target_concurrency"] is None and inv is not None and (mf is not None or tp is not None):
        # the calculator's own inverse is asked at the budget what-if's setting too, so its
        # "missing per GPU" is that setting's gap, not the logged pool's (issue 35 point 8)
        report = replace(report, inverse=sizer.inverse(
            inv.dtype, inv.context_len, inv.concurrency, tp=tp, mem_fraction_static=mf))
    if opt["target_concurrency"] is not None and calc.context_len:
        appended = report.inverse is None
        # asked at the budget what-if's setting (--target-tp, the memory knob), as the
        # what-if pane asks it (`kvtui.ui.whatif_calc._inverse_rows`)
        report = replace(report, inverse=sizer.inverse(
            (wanted or [calc.current_dtype])[0], calc.context_len,
            opt["target_concurrency"], tp=tp, mem_fraction_static=mf))
    if args.json:
        doc = report.to_json()
        if appended:  # an inverse the calculator did not give comes last, as it always did
            doc["inverse"] = doc.pop("inverse")
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")
        return 0
    from kvtui.core.capacity.render import render_whatif_text

    sys.stdout.write(render_whatif_text(report, explain=not args.no_explain))
    return 0
