"""The fold handlers: one per event kind, each folding an event into the run segmentation
chose for it (`kvtui.core.state.State.apply`).

A handler reads the event and its line (source, number, text: the evidence) and writes its run
only; no handler needs the whole state, so none is given it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvtui.core import dtypes
from kvtui.core.evidence import Evidence
from kvtui.core.run_model import (
    NOTICE_KINDS,
    Notice,
    Pool,
    Run,
    _is_draft_class,
    _speculative,
    pool_kind,
)
from kvtui.core.runtime import Witness
from parsers import Event

# A fold handler: (run, event, source, line number, line text).
Handler = Callable[[Run, Event, str, int, str], None]


def _ev(ev: Event, source: str, line_no: int, text: str) -> Evidence:
    return Evidence.of(source, line_no, ev.rank, ev.ts, text)


def _bump(existing: Evidence | None, ev: Event, source: str, line_no: int, text: str) -> Evidence:
    if existing is None:
        return _ev(ev, source, line_no, text)
    existing.count += 1
    return existing


_DUMP_META = frozenset({"form", "partial", "resolved", "resolved_kv_dtype", "complete",
                        "before_dump"})


def _dump_fields(ev: Event) -> dict[str, Any]:
    return {k: v for k, v in ev.fields.items() if k not in _DUMP_META}


def _on_server_args(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    fields = _dump_fields(ev)
    partial = bool(ev.get("partial"))
    resolved = bool(ev.get("resolved"))
    evidence = _ev(ev, src, n, text)
    if not run.dump_parts and not partial:
        # the dump as printed stays in `dump_copies` (`sibling_part` compares with it)
        prior, run.server_args = run.server_args, dict(fields)
        if resolved:
            run.resolved_keys = {k for k, v in fields.items() if v is not None}
        # What a line before the dump stated (a partial one: vLLM's "Chunked prefill is
        # enabled with ..."), and the dump not.
        for k, v in [*run.early_args.items(), *prior.items()]:
            if v is not None and run.server_args.get(k) is None:
                run.server_args[k] = v
                run.resolved_keys.add(k)
    else:
        # Another part of the same start: each fills what the others left unsaid, the
        # operator's own arguments win over the engine's resolved values, and the engine's
        # resolved dump over what only a partial line stated.
        sa = run.server_args
        stated = {k for first, _ in run.dump_copies.values() for k, v in first.items()
                  if v is not None}
        for k, v in fields.items():
            if v is None:
                if not partial:
                    sa.setdefault(k, None)
            elif sa.get(k) is None or (not resolved and k in run.resolved_keys) or (
                    not partial and k not in stated):
                sa[k] = v
                if resolved:
                    run.resolved_keys.add(k)
                else:
                    run.resolved_keys.discard(k)
    if ev.get("before_dump"):
        for k, v in fields.items():  # the first (vLLM: the target's, not a draft's)
            if v is not None:
                run.early_args.setdefault(k, v)
    if ev.get("complete"):
        run.args_complete = True
    if not partial:
        run.dump_parts.add((ev.get("form"), ev.rank))
        form = ev.get("form")
        first, copies = run.dump_copies.get(form, (fields, 0))
        run.dump_copies[form] = (first, copies + 1)
        if run.server_args_evidence is None:
            run.server_args_evidence = evidence
            run.start = evidence
    version = ev.get("version")
    if isinstance(version, str) and run.engine_version is None:
        run.engine_version = version
    kv = dtypes.normalize(ev.get("resolved_kv_dtype"))
    if kv is not None and kv != "auto":
        # The engine's config line (vLLM's `Initializing a V1 LLM engine (v0.14.1) with
        # config: ...`) states the dtype it resolved: its own origin, as no KV-dtype line
        # need exist (0.14.1 prints none for an `auto` BF16 cache).
        for d, o, e in run.kv_dtype_lines:
            if d == kv and o == "config":
                e.count += 1
                break
        else:
            run.kv_dtype_lines.append((kv, "config", evidence))


def _on_kv_dtype(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    dtype = dtypes.normalize(ev.get("dtype"))
    if dtype is None:
        return
    origin = ev.get("origin") or "resolved"
    if origin == "override" and ev.get("reason") == "DSA backends":
        origin = "dsa_backend"
        # The backends it names are resolved arguments, as `DSA with TP mode is active`'s
        # sizes are: the dump keeps them where it states them, the line fills where not.
        for key in ("dsa_prefill_backend", "dsa_decode_backend"):
            value = ev.get(key)
            if value is None:
                continue
            run.early_args.setdefault(key, value)
            if run.server_args is not None and run.server_args.get(key) is None:
                run.server_args[key] = value
    for d, o, e in run.kv_dtype_lines:
        if d == dtype and o == origin:
            e.count += 1
            return
    run.kv_dtype_lines.append((dtype, origin, _ev(ev, src, n, text)))


def _on_scales_missing(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.scales_missing = _bump(run.scales_missing, ev, src, n, text)


def _on_scales_loaded(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.scales_loaded = _bump(run.scales_loaded, ev, src, n, text)
    run.scales_path = ev.get("path")


def _on_kv_pool(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    kind = pool_kind(ev)
    key = (ev.rank, ev.get("label"), kind)
    raw = ev.get("dtype")
    post = bool(ev.get("post_capture"))
    existing = run.pools.get(key)
    # A second "KV Cache is allocated" on the same rank of the same run is the draft worker's
    # (it initialises after the target), as is one right after a draft model's weight load. A
    # post-capture re-sizing line restates the target's pool instead.
    dw = run.draft_weights.get(ev.rank)
    last = existing.evidence.line if existing is not None and existing.evidence else -1
    after_draft_load = (dw is not None and dw.get("line", -1) > last) or (
        # an excerpt that shows only other ranks' draft load
        dw is None and existing is None and bool(run.draft_weights)
        and ev.rank not in run.weights)
    # A whole-cache budget (vLLM's "Available KV cache memory") holds a draft's layers too: a
    # second one on the rank restates it.
    draft = kind != "kv" and (bool(ev.get("draft")) or (not post and (after_draft_load or (
        existing is not None and existing.role == "target" and not existing.post_capture))))
    pool = Pool(
        rank=ev.rank, label=ev.get("label"), kind=kind, dtype=dtypes.normalize(raw),
        dtype_raw=raw, tokens=ev.get("tokens"), k_gib=ev.get("k_gib"), v_gib=ev.get("v_gib"),
        kv_gib=ev.get("kv_gib"), evidence=_ev(ev, src, n, text),
        role="draft" if draft else "target", post_capture=post,
        configured=bool(ev.get("configured")),
    )
    run.pools[(ev.rank, ev.get("label"), f"{kind}:draft") if draft else key] = pool


def _on_mamba_pool(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    key = (ev.rank, None, "mamba")
    run.pools[key] = Pool(
        rank=ev.rank, label=None, kind="mamba", dtype=None, dtype_raw=None, tokens=None,
        slots=ev.get("slots"), conv_gib=ev.get("conv_gib"), ssm_gib=ev.get("ssm_gib"),
        evidence=_ev(ev, src, n, text),
    )


def _on_swa_split(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.swa_split = {"full_tokens": ev.get("full_tokens"), "swa_tokens": ev.get("swa_tokens"),
                     "rank": ev.rank}


# Capacity facts an engine may print on lines of their own (vLLM: the pool in blocks, the
# concurrency it reaches, a forced block count), kept when the line with the tokens comes later.
_CAPACITY_PARTS = ("gpu_blocks", "cpu_blocks", "page_size", "max_concurrency",
                   "gpu_blocks_override", "default_page_size")


def _on_capacity(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    fields = dict(ev.fields)
    cur = run.capacity.get(ev.rank)
    if fields.pop("per_worker", None) and cur is not None and _larger_worker(run, ev.rank, cur,
                                                                            fields):
        return
    if cur is None or fields.get("max_total_num_tokens") is not None:
        for k in _CAPACITY_PARTS:
            if cur is not None and cur.get(k) is not None and fields.get(k) is None:
                fields[k] = cur[k]
        run.capacity[ev.rank] = cur = fields
    else:
        cur.update((k, v) for k, v in fields.items() if v is not None)
    _tokens_from_blocks(run, cur)
    if run.capacity_evidence is None or ev.rank == run.capacity_evidence.rank:
        run.capacity_evidence = _ev(ev, src, n, text)


def _larger_worker(run: Run, rank: str | None, cur: dict[str, Any],
                   fields: dict[str, Any]) -> bool:
    """Is this per-worker line another worker's larger figure (or the concurrency printed with
    it), which the engine does not run at? The smallest size seen stays the pool."""
    new, held = fields.get("max_total_num_tokens"), cur.get("max_total_num_tokens")
    if new is None:
        return rank in run.capacity_larger
    if isinstance(held, int) and isinstance(new, int) and new >= held:
        run.capacity_larger.add(rank)
        return True
    run.capacity_larger.discard(rank)
    return False


def _tokens_from_blocks(run: Run, cap: dict[str, Any]) -> None:
    """A pool stated in pages: tokens = pages x tokens per page. The page size is the one the
    dump names (or a line that forced it), else the one the printed concurrency implies
    (concurrency = pages x page size / context length, to two decimals), snapped to a power of
    two, else the default the engine's line stands for (`default_page_size`)."""
    blocks = cap.get("gpu_blocks")
    if cap.pop("page_size_default", False):  # taken before a line that may say more: again
        cap.pop("page_size", None)
        cap.pop("max_total_num_tokens", None)
    if cap.get("max_total_num_tokens") is not None or not isinstance(blocks, int) or blocks <= 0:
        return  # no pool (0 or fewer blocks: the engine stops, alerts' profiled-capacity-negative)
    page = (cap.get("page_size") or run.kv_layout.get("block_size")
            or run.server_args.get("page_size"))
    conc, context = cap.get("max_concurrency"), cap.get("context_len")
    if not isinstance(page, int) and isinstance(conc, float) and isinstance(context, int):
        implied = conc * context / blocks
        near = 1 << max(0, round(implied).bit_length() - 1) if implied >= 1 else 0
        for cand in (near, near * 2):
            if cand and abs(implied / cand - 1) <= 0.05:
                page = cand
                break
    if not isinstance(page, int) and isinstance(cap.get("default_page_size"), int):
        page = cap["default_page_size"]
        cap["page_size_default"] = True
    if isinstance(page, int) and page > 0:
        cap["page_size"] = page
        cap["max_total_num_tokens"] = blocks * page


def _on_weight_begin(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    # A second begin on a rank whose target already loaded is a draft model's: the target's
    # "before" stays the memory baseline.
    if ev.get("avail_gib") is not None and ev.rank not in run.weights:
        run.weights_begin[ev.rank] = ev.get("avail_gib")


def _on_weight_end(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    info = dict(ev.fields)
    info["evidence"] = _ev(ev, src, n, text)
    target = run.weights.get(ev.rank)
    cls = info.get("model_class")
    if target is not None and not cls:
        # Every model runner, the draft worker's too, names its class (SGLang 0.5.8
        # model_executor/model_runner.py:949-955, 0.5.23 :1371-1379): a line without one is cut
        # short. With the target's weights known it is the draft's when a speculative config
        # is present, else it says nothing new. The overlap commit line never is a draft's
        # (0.5.23 model_runner_components/startup_weight_load.py:353, :537).
        if info.get("overlap") or not _speculative(run):
            return
        info["line"] = n
        run.draft_weights[ev.rank] = info
        return
    if _is_draft_class(cls) or (target is not None and cls and not _is_draft_class(
            target.get("model_class")) and target.get("model_class") != cls):
        # A draft model's load (its class says so, or a second model on a rank whose target
        # already loaded) must not overwrite the target's memory figures.
        info["line"] = n
        run.draft_weights[ev.rank] = info
        return
    run.weights[ev.rank] = info


def _on_pool_end(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    if ev.get("avail_gib") is not None:
        run.memory_pool_end[ev.rank] = ev.get("avail_gib")


def _on_cuda_graph(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.cuda_graph[ev.rank] = dict(ev.fields)


def _on_dist_init(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.dist_init[ev.rank] = ev.get("usage_gib")


def _on_graph_begin(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.cuda_graph_begin[ev.rank] = ev.get("avail_gib")


def _on_oom(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    msg = str(ev.get("message") or text)[:200]
    for e, m in zip(run.ooms, run.oom_messages, strict=True):
        if m == msg:
            e.count += 1
            return
    if len(run.ooms) < 50:
        run.ooms.append(_ev(ev, src, n, text))
        run.oom_messages.append(msg)
    else:
        run.ooms[-1].count += 1


def _on_unbalanced(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.mem_unbalanced = _bump(run.mem_unbalanced, ev, src, n, text)


def _on_capped(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.max_total_tokens_capped = _bump(run.max_total_tokens_capped, ev, src, n, text)
    profiled = ev.get("profiled")
    if isinstance(profiled, int) and (run.profiled_tokens is None
                                      or profiled < run.profiled_tokens):
        run.profiled_tokens = profiled


def _on_spec_decode(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    """Speculative decoding's acceptance (vLLM's metrics line) is an event for `kvtui events`
    and the comparisons built on it; no report figure reads it yet, so nothing is kept."""


def _on_notice(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    notice = run.notices.get(ev.kind)
    if notice is None:
        run.notices[ev.kind] = Notice(_ev(ev, src, n, text), dict(ev.fields))
    else:
        notice.evidence.count += 1
        notice.fields = dict(ev.fields)


def _on_swa_pool(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    """The SWAKVPool line follows its two sub-pools' lines. Before 0.5.17 those are unlabelled
    (`KV Cache is allocated`), SWA first, then Full, in every release that prints the SWAKVPool
    line (0.5.4 mem_cache/memory_pool.py:952/958, 0.5.6 :1183/1189; 0.5.9
    mem_cache/swa_memory_pool.py:63/72, 0.5.16 :60/69), so the second one looks like a draft
    model's pool. Their token counts name them here; when the counts are equal (swa size = full
    size: a ratio of 1.0), their order does: the rank's last one is the Full one, the one before
    it the SWA one (an excerpt may show only the Full one).

    Each pool prints the line once, as it is built (0.5.23 swa_memory_pool.py:131-134): a
    rank's second one in a run is a speculative draft's own SWA pool (built after the
    target's), whose sub-pools stay the draft's; `swa_pools` keeps the target's line."""
    info = dict(ev.fields)
    info["evidence"] = _ev(ev, src, n, text)
    draft = ev.rank in run.swa_pools
    if not draft:
        run.swa_pools[ev.rank] = info
    swa_tokens, full_tokens = ev.get("swa_tokens"), ev.get("full_tokens")
    names = {swa_tokens: "SWA", full_tokens: "Full"}
    names.pop(None, None)
    keys = [k for k in run.pools if k[0] == ev.rank and k[1] is None
            and k[2] in (("mha:draft",) if draft else ("mha", "mha:draft"))]
    by_order: dict[tuple[str | None, str | None, str], str] = {}
    if swa_tokens is not None and swa_tokens == full_tokens:
        unlabelled = sorted((k for k in keys if run.pools[k].tokens == full_tokens),
                            key=lambda k: _line_of(run.pools[k].evidence))
        by_order = dict(zip(reversed(unlabelled), ("Full", "SWA"), strict=False))
    for key in keys:
        pool = run.pools[key]
        label = by_order.get(key) or (None if by_order else names.get(pool.tokens))
        if label is None:
            continue
        del run.pools[key]
        pool.label, pool.role = label, "draft" if draft else "target"
        run.pools[(ev.rank, label, "mha:draft" if draft else "mha")] = pool


def _line_of(evidence: Evidence | None) -> int:
    return evidence.line if evidence is not None else -1


def _on_swa_sizing(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.swa_sizing = {**ev.fields, "rank": ev.rank}


def _on_kv_reserved(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    gib = ev.get("reserved_gib")
    if isinstance(gib, (int, float)):
        run.kv_reserved[ev.rank] = float(gib)  # the post-capture re-sizing repeats the figure
    left = ev.get("remaining_gib")
    if isinstance(left, (int, float)):
        run.kv_budget_left[ev.rank] = float(left)


def _on_dsv4_memory(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.dsv4_memory[ev.rank] = {**ev.fields, "evidence": _ev(ev, src, n, text)}


def _on_dsv4_pool(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    # The sizes line (pool configurator) and the pool's own init line complete each other.
    known = run.dsv4_pools.setdefault(ev.rank, {})
    known.update({k: v for k, v in ev.fields.items() if v is not None})


def _on_engine_version(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.dump_parts.add(("version", ev.rank))
    if run.engine_version is None and isinstance(ev.get("version"), str):
        run.engine_version = ev.get("version")


def _on_qscale(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.qscale_missing = _bump(run.qscale_missing, ev, src, n, text)
    if ev.get("form"):
        run.qscale_forms.add(ev.get("form"))


def _on_memory_profile(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    profile = run.memory_profile.setdefault(ev.rank, {})
    profile.update((k, v) for k, v in ev.fields.items() if v is not None)


def _on_kv_layout(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.kv_layout.update((k, v) for k, v in ev.fields.items() if v is not None)
    if run.kv_layout_evidence is None:
        run.kv_layout_evidence = _ev(ev, src, n, text)


# A `parallel_rank` group -> the server_args size it proves (None: no shared name).
# The groups whose sizes the places may prove (`Run.placed_sizes`; the layout reads them:
# `kvtui.core.deployment.layout`).
_PLACE_GROUPS = ("dp_rank", "pp_rank", "tp_rank", "pcp_rank")


def _on_parallel_rank(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    rank, world = ev.get("global_rank"), ev.get("world_size")
    if not isinstance(rank, int) or not isinstance(world, int):
        return
    place = {g: i for g in _PLACE_GROUPS if isinstance(i := ev.get(g), int)}
    run.world_sizes.add(world)
    if run.rank_places.setdefault(rank, place) != place:
        run.places_conflict = True


def _on_prefill(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.runtime.add_batch(False, ev.fields, ev.ts, n, Witness(src, n, ev.rank, ev.ts, text))


def _on_decode(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.runtime.add_batch(True, ev.fields, ev.ts, n, Witness(src, n, ev.rank, ev.ts, text))


def _on_retraction(run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.runtime.add_retraction(ev.fields, ev.ts, n, Witness(src, n, ev.rank, ev.ts, text))


HANDLERS: dict[str, Handler] = {
    "server_args": _on_server_args,
    "kv_dtype": _on_kv_dtype,
    "fp8_scales_missing": _on_scales_missing,
    "fp8_scales_loaded": _on_scales_loaded,
    "kv_pool": _on_kv_pool,
    "mamba_pool": _on_mamba_pool,
    "swa_split": _on_swa_split,
    "capacity": _on_capacity,
    "load_weight_begin": _on_weight_begin,
    "load_weight_end": _on_weight_end,
    "memory_pool_end": _on_pool_end,
    "kv_budget_reserved": _on_kv_reserved,
    "cuda_graph_end": _on_cuda_graph,
    "dist_init_end": _on_dist_init,
    "cuda_graph_begin": _on_graph_begin,
    "oom": _on_oom,
    "mem_unbalanced": _on_unbalanced,
    "max_total_tokens_capped": _on_capped,
    "prefill_batch": _on_prefill,
    "decode_batch": _on_decode,
    "retraction": _on_retraction,
    **dict.fromkeys(NOTICE_KINDS, _on_notice),
    "spec_decode": _on_spec_decode,
    "swa_pool": _on_swa_pool,
    "swa_sizing": _on_swa_sizing,
    "dsv4_memory": _on_dsv4_memory,
    "dsv4_pool": _on_dsv4_pool,
    "engine_version": _on_engine_version,
    "fp8_qscale_missing": _on_qscale,
    "memory_profile": _on_memory_profile,
    "kv_layout": _on_kv_layout,
    "parallel_rank": _on_parallel_rank,
}
