"""Facts folded from parser events: per rank, per pool, per server start ("run").

Why a fold and not a list of events: a deploy session can log millions of decode lines, and the
questions kvtui answers (what KV dtype is in effect, are scales missing, how big is the pool, how
hard is it pressed) need only bounded aggregates plus the *first* evidence line of each fact.
Memory therefore stays flat however long the log is.

Runs: each `server_args` dump (or a second weight load on a rank that already finished start-up)
begins a new run. The latest run is current; earlier ones are kept for the report.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kvtui.core import dtypes
from parsers import Event

EVIDENCE_TEXT_MAX = 400
TIMELINE_POINTS = 600


@dataclass(slots=True)
class Evidence:
    """Where a fact came from: the first line that showed it, and how often it repeated."""

    source: str
    line: int
    rank: str | None
    ts: str | None
    text: str
    count: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "line": self.line, "rank": self.rank, "ts": self.ts,
                "text": self.text, "count": self.count}


@dataclass(slots=True)
class Pool:
    rank: str | None
    label: str | None
    kind: str  # "mha" | "mla" | "mamba"
    dtype: str | None  # canonical (kvtui.core.dtypes); None when the line does not print it
    dtype_raw: str | None
    tokens: int | None
    k_gib: float | None = None
    v_gib: float | None = None
    kv_gib: float | None = None
    slots: int | None = None
    conv_gib: float | None = None
    ssm_gib: float | None = None
    evidence: Evidence | None = None
    # "target", or "draft" for a speculative-decoding draft model's own pool: the draft worker
    # allocates after the target on the same rank, and must never pass for the target's pool.
    role: str = "target"
    post_capture: bool = False

    @property
    def total_gib(self) -> float | None:
        if self.kind == "mamba":
            if self.conv_gib is None and self.ssm_gib is None:
                return None
            return (self.conv_gib or 0.0) + (self.ssm_gib or 0.0)
        if self.kv_gib is not None:
            return self.kv_gib
        if self.k_gib is None and self.v_gib is None:
            return None
        return (self.k_gib or 0.0) + (self.v_gib or 0.0)

    @property
    def bytes_per_token(self) -> float | None:
        """Logged GiB x 2^30 / tokens: what SGLang actually spent per token on this rank.

        The logged sizes are rounded to 0.01 GiB and include the padded dummy slot, so this is a
        measurement with about +-0.5% noise on large pools, not an exact cell size.
        """
        total = self.total_gib
        if self.kind == "mamba" or total is None or not self.tokens:
            return None
        return total * (1 << 30) / self.tokens

    def to_dict(self) -> dict[str, Any]:
        bpt = self.bytes_per_token
        return {
            "rank": self.rank, "label": self.label, "kind": self.kind, "dtype": self.dtype,
            "dtype_raw": self.dtype_raw, "tokens": self.tokens, "k_gib": self.k_gib,
            "v_gib": self.v_gib, "kv_gib": self.kv_gib, "slots": self.slots,
            "conv_gib": self.conv_gib, "ssm_gib": self.ssm_gib, "role": self.role,
            "bytes_per_token": round(bpt, 1) if bpt is not None else None,
            "evidence": self.evidence.to_dict() if self.evidence else None,
        }


class TimelinePoint(NamedTuple):
    """One decode (or retraction) sample for the timeline. A tuple: millions are made."""

    ts: str | None
    line: int
    token_usage: float | None
    running_req: int | None
    queue_req: int | None
    gen_throughput: float | None
    retraction: bool = False


_new_point = tuple.__new__


@dataclass
class Runtime:
    """Bounded aggregates over the runtime batch lines."""

    prefill_batches: int = 0
    decode_batches: int = 0
    last_token_usage: float | None = None
    peak_token_usage: float | None = None
    peak_token_usage_evidence: Evidence | None = None
    last_running_req: int | None = None
    peak_running_req: int | None = None
    last_queue_req: int | None = None
    peak_queue_req: int | None = None
    last_gen_throughput: float | None = None
    gen_throughput_centi: int = 0  # sum in 1/100 token/s: exact, so chunk sums add up
    gen_throughput_n: int = 0
    retractions: int = 0
    retracted_reqs: int = 0
    new_token_ratio_first: float | None = None
    new_token_ratio_last: float | None = None
    retraction_evidence: Evidence | None = None
    # Saturation tracking: length of the current and longest run of consecutive batches whose
    # token usage is >= the saturation threshold, and whether the queue kept growing.
    # The prefix counters (streak from the first batch, until the first break) make the
    # aggregates mergeable across chunks of one file (kvtui.core.merge).
    saturated_streak: int = 0
    saturated_longest: int = 0
    saturated_prefix: int = 0
    saturated_broken: bool = False
    saturated_evidence: Evidence | None = None  # the first saturated batch
    queue_growth_streak: int = 0
    queue_growth_longest: int = 0
    queue_growth_prefix: int = 0
    queue_dropped: bool = False
    first_decode_queue: int | None = None
    last_decode_queue: int | None = None
    peak_queue_evidence: Evidence | None = None
    last_ts: str | None = None
    timeline: deque[TimelinePoint] = field(default_factory=lambda: deque(maxlen=TIMELINE_POINTS))

    SATURATION = 0.95

    @property
    def mean_gen_throughput(self) -> float | None:
        if not self.gen_throughput_n:
            return None
        return self.gen_throughput_centi / self.gen_throughput_n / 100

    def to_dict(self) -> dict[str, Any]:
        mean = self.mean_gen_throughput
        return {
            "prefill_batches": self.prefill_batches,
            "decode_batches": self.decode_batches,
            "last_token_usage": self.last_token_usage,
            "peak_token_usage": self.peak_token_usage,
            "last_running_req": self.last_running_req,
            "peak_running_req": self.peak_running_req,
            "last_queue_req": self.last_queue_req,
            "peak_queue_req": self.peak_queue_req,
            "last_gen_throughput": self.last_gen_throughput,
            "mean_gen_throughput": round(mean, 2) if mean is not None else None,
            "retractions": self.retractions,
            "retracted_reqs": self.retracted_reqs,
            "new_token_ratio_first": self.new_token_ratio_first,
            "new_token_ratio_last": self.new_token_ratio_last,
            "saturated_longest": self.saturated_longest,
            "queue_growth_longest": self.queue_growth_longest,
            "last_ts": self.last_ts,
        }


@dataclass
class Run:
    """One server start: the facts of one deployment configuration."""

    index: int
    start: Evidence | None = None
    server_args: dict[str, Any] = field(default_factory=dict)
    server_args_evidence: Evidence | None = None
    kv_dtype_lines: list[tuple[str, str, Evidence]] = field(default_factory=list)
    scales_missing: Evidence | None = None
    scales_loaded: Evidence | None = None
    scales_path: str | None = None
    pools: dict[tuple[str | None, str | None, str], Pool] = field(default_factory=dict)
    swa_split: dict[str, Any] | None = None
    capacity: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    capacity_evidence: Evidence | None = None
    weights: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    draft_weights: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    weights_begin: dict[str | None, float] = field(default_factory=dict)
    memory_pool_end: dict[str | None, float] = field(default_factory=dict)
    cuda_graph: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    ooms: list[Evidence] = field(default_factory=list)
    oom_messages: list[str] = field(default_factory=list)
    mem_unbalanced: Evidence | None = None
    max_total_tokens_capped: Evidence | None = None
    runtime: Runtime = field(default_factory=Runtime)
    ranks: set[str] = field(default_factory=set)
    lines_seen: int = 0
    # Format hints seen in this run's lines (see `_hints`), used to infer the SGLang version.
    hints: set[str] = field(default_factory=set)
    kinds_seen: set[str] = field(default_factory=set)
    # What opened the run: "start" (a dump or override line: a server start) or the first
    # event's kind (a log that begins mid-way). kvtui.core.merge relies on it.
    opener: str | None = None

    # -- derived facts -------------------------------------------------------------------
    @property
    def configured_kv_dtype(self) -> str | None:
        """What the operator asked for (`auto` when the dump shows it or when nothing was said)."""
        if "kv_cache_dtype" in self.server_args:
            return dtypes.normalize(self.server_args.get("kv_cache_dtype")) or "auto"
        return None

    @property
    def effective(self) -> tuple[str | None, str, Evidence | None]:
        """(dtype, basis, evidence): the KV dtype SGLang actually used, and how we know.

        Preference: a "resolved" dtype line, then the dtype printed on a KV pool line, then a
        model-specific override, then a concrete configured value, then (for `auto` on versions
        that print the model dtype at weight load) the model dtype.
        """
        for dtype, origin, ev in self.kv_dtype_lines:
            if origin == "resolved":
                return dtype, "kv_dtype_line", ev
        for pool in self.pools.values():
            if pool.kind != "mamba" and pool.dtype:
                conf = self.configured_kv_dtype
                if pool.dtype == "fp4_e2m1" and conf in dtypes.FP4:
                    # torch.float4_e2m1fn_x2 is the logical dtype of every FP4 recipe; the
                    # configured recipe (nvfp4, fp4_mx_block16) is the more precise name.
                    return conf, "pool_line", pool.evidence
                return pool.dtype, "pool_line", pool.evidence
        for dtype, origin, ev in self.kv_dtype_lines:
            if origin == "override":
                return dtype, "override_line", ev
        conf = self.configured_kv_dtype
        if conf and conf != "auto":
            return conf, "server_args", self.server_args_evidence
        if self.scales_missing is not None:
            # The warning fires only for a literal fp8_e4m3 setting.
            return "fp8_e4m3", "fp8_warning", self.scales_missing
        for w in self.weights.values():
            model_dtype = dtypes.normalize(w.get("dtype"))
            if model_dtype and conf in (None, "auto"):
                return model_dtype, "model_dtype", w.get("evidence")
        return None, "unknown", None

    @property
    def scales(self) -> str:
        if self.scales_loaded is not None:
            return "loaded"
        if self.scales_missing is not None:
            return "missing"
        return "unknown"

    def primary_capacity(self) -> dict[str, Any] | None:
        """The capacity line of the lowest rank (TP0 prints it from 0.4.7 on)."""
        if not self.capacity:
            return None
        return self.capacity[sorted(self.capacity, key=_rank_sort_key)[0]]

    def kv_pools(self) -> list[Pool]:
        """The target model's KV pools (a draft model's pools are `draft_kv_pools`)."""
        return [p for p in self.pools.values() if p.kind != "mamba" and p.role == "target"]

    def draft_kv_pools(self) -> list[Pool]:
        pools = [p for p in self.pools.values() if p.kind != "mamba" and p.role == "draft"]
        pools.sort(key=lambda p: _rank_sort_key(p.rank))
        return pools

    def primary_kv_pool(self) -> Pool | None:
        """The full-attention pool of the lowest rank: what the calculator holds fixed."""
        pools = self.kv_pools()
        if not pools:
            return None
        pools.sort(key=lambda p: (_rank_sort_key(p.rank), p.label not in (None, "Full")))
        return pools[0]

    def mamba_pool(self) -> Pool | None:
        pools = [p for p in self.pools.values() if p.kind == "mamba"]
        pools.sort(key=lambda p: _rank_sort_key(p.rank))
        return pools[0] if pools else None

    @property
    def progressed(self) -> bool:
        """Past argument resolution: anything but the dump and KV dtype override lines seen."""
        return (bool(self.kinds_seen - {"server_args", "kv_dtype"})
                or self.runtime.decode_batches > 0)

    @property
    def started_up(self) -> bool:
        return bool(self.capacity) or self.runtime.decode_batches > 0


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _rank_sort_key(rank: str | None) -> tuple[int, ...]:
    if not rank:
        return (-1,)
    nums = []
    for tok in rank.split():
        digits = "".join(ch for ch in tok if ch.isdigit())
        nums.append(int(digits) if digits else 0)
    return tuple(nums)


class State:
    """Folds events into runs. `apply` is the mutator (besides `kvtui.core.bulk`, which
    folds stretches of runtime rows to the same result); it never raises on odd events."""

    def __init__(self) -> None:
        self.runs: list[Run] = [Run(index=0)]
        self.sources: dict[str, int] = {}  # source -> lines seen
        self.events: int = 0
        self.kinds: dict[str, int] = {}

    @property
    def current(self) -> Run:
        return self.runs[-1]

    def note_line(self, source: str) -> None:
        self.sources[source] = self.sources.get(source, 0) + 1

    def apply(self, ev: Event, source: str, line_no: int, text: str) -> None:
        self.events += 1
        kind = ev.kind
        kinds = self.kinds
        kinds[kind] = kinds.get(kind, 0) + 1
        handler = _HANDLERS.get(kind)
        if handler is None:
            return
        run = self._run_for(ev)
        run.lines_seen += 1
        if ev.rank:
            run.ranks.add(ev.rank)
        if kind not in _RUNTIME_KINDS or kind not in run.kinds_seen:
            _hints(run, ev, text)
        run.kinds_seen.add(kind)
        handler(self, run, ev, source, line_no, text)

    # -- run boundaries -------------------------------------------------------------------
    def _run_for(self, ev: Event) -> Run:
        """The run an event belongs to, opening a new one at a server start.

        SGLang resolves its arguments (and logs model-specific KV dtype overrides) just before
        it dumps them, so both the dump and an override line open a new run once the current
        one has got past argument resolution. A second weight load on a rank that already
        served is a restart whose dump was not captured.
        """
        run = self.current
        kind = ev.kind
        start = kind == "server_args" or (kind == "kv_dtype" and ev.get("origin") == "override")
        if start:
            if run.progressed or (kind == "server_args" and run.server_args):
                run = self._new_run()
        elif kind == "load_weight_begin" and ev.rank in run.weights_begin and run.started_up:
            run = self._new_run()
        if run.opener is None:
            run.opener = "start" if start else kind
        return run

    def _new_run(self) -> Run:
        run = Run(index=len(self.runs))
        self.runs.append(run)
        return run


_RUNTIME_KINDS = frozenset({"decode_batch", "prefill_batch"})


def _hints(run: Run, ev: Event, text: str) -> None:
    """Record format features that date the SGLang version (see sglang-log-lines.md).

    Hints are plain strings so the version inference can live in one table elsewhere
    (`kvtui.core.version`): "<kind>:<feature>".
    """
    h = run.hints
    k = ev.kind
    if ev.ts is not None:
        h.add("ts:ms" if "." in ev.ts else ("ts:time_only" if "-" not in ev.ts else "ts:date"))
    if k == "server_args":
        h.add(f"server_args:{ev.get('form') or 'repr'}")
        if "attn_dp_size" in text:
            h.add("server_args:attn_dp_size")
        if "page_size" in text:
            h.add("server_args:page_size")
    elif k == "kv_dtype":
        h.add(f"kv_dtype:{ev.get('origin') or 'resolved'}")
    elif k == "kv_pool":
        if ev.get("dtype"):
            h.add("kv_pool:dtype")
        if ev.get("label"):
            h.add("kv_pool:label")
        if ev.get("tokens") is None:
            h.add("kv_pool:no_tokens")
    elif k == "load_weight_end":
        if ev.get("elapsed_s") is not None:
            h.add("load_weight_end:elapsed")
        if ev.get("dtype") is None:
            h.add("load_weight_end:no_dtype")
        if ev.get("usage_gib") is None:
            h.add("load_weight_end:no_usage")
    elif k == "capacity":
        h.add("capacity:avail" if ev.get("available_gpu_mem_gib") is not None
              else "capacity:no_avail")
        if ev.get("chunked_prefill_size") is None:
            h.add("capacity:no_chunked")
    elif k == "decode_batch":
        h.add("decode:comma" if "Decode batch," in text or "Decode batch [" in text
              else "decode:period")
        if ev.get("cuda_graph") is not None:
            h.add("decode:cuda_graph")
    elif k == "prefill_batch":
        h.add("prefill:comma" if "Prefill batch," in text else "prefill:period")
    elif k == "retraction":
        if "#new_tokens_gained" in text:
            h.add("retraction:gained")
        elif "Decode out of memory happened" in text:
            h.add("retraction:old")
        else:
            h.add("retraction:pool_full")
    elif k == "mamba_pool":
        h.add("mamba_pool:slots" if ev.get("slots") is not None else "mamba_pool:no_slots")


def _ev(ev: Event, source: str, line_no: int, text: str) -> Evidence:
    if len(text) > EVIDENCE_TEXT_MAX:
        text = text[:EVIDENCE_TEXT_MAX] + "…"
    return Evidence(source=source, line=line_no, rank=ev.rank, ts=ev.ts, text=text)


def _bump(existing: Evidence | None, ev: Event, source: str, line_no: int, text: str) -> Evidence:
    if existing is None:
        return _ev(ev, source, line_no, text)
    existing.count += 1
    return existing


def _on_server_args(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.server_args = {k: v for k, v in ev.fields.items() if k != "form"}
    run.server_args_evidence = _ev(ev, src, n, text)
    run.start = run.server_args_evidence


def _on_kv_dtype(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    dtype = dtypes.normalize(ev.get("dtype"))
    if dtype is None:
        return
    origin = ev.get("origin") or "resolved"
    for d, o, e in run.kv_dtype_lines:
        if d == dtype and o == origin:
            e.count += 1
            return
    run.kv_dtype_lines.append((dtype, origin, _ev(ev, src, n, text)))


def _on_scales_missing(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.scales_missing = _bump(run.scales_missing, ev, src, n, text)


def _on_scales_loaded(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.scales_loaded = _bump(run.scales_loaded, ev, src, n, text)
    run.scales_path = ev.get("path")


# Model classes of speculative-decoding drafts ("Load weight end. type=LlamaForCausalLMEagle3").
_DRAFT_CLASS_MARKS = ("Eagle", "MTP", "NextN", "DFlash", "Draft")


def _is_draft_class(model_class: object) -> bool:
    return isinstance(model_class, str) and any(m in model_class for m in _DRAFT_CLASS_MARKS)


def _on_kv_pool(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    kind = "mla" if ev.get("kv_gib") is not None else "mha"
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
    draft = not post and (after_draft_load or (
        existing is not None and existing.role == "target" and not existing.post_capture))
    pool = Pool(
        rank=ev.rank, label=ev.get("label"), kind=kind, dtype=dtypes.normalize(raw),
        dtype_raw=raw, tokens=ev.get("tokens"), k_gib=ev.get("k_gib"), v_gib=ev.get("v_gib"),
        kv_gib=ev.get("kv_gib"), evidence=_ev(ev, src, n, text),
        role="draft" if draft else "target", post_capture=post,
    )
    run.pools[(ev.rank, ev.get("label"), f"{kind}:draft") if draft else key] = pool


def _on_mamba_pool(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    key = (ev.rank, None, "mamba")
    run.pools[key] = Pool(
        rank=ev.rank, label=None, kind="mamba", dtype=None, dtype_raw=None, tokens=None,
        slots=ev.get("slots"), conv_gib=ev.get("conv_gib"), ssm_gib=ev.get("ssm_gib"),
        evidence=_ev(ev, src, n, text),
    )


def _on_swa_split(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.swa_split = {"full_tokens": ev.get("full_tokens"), "swa_tokens": ev.get("swa_tokens"),
                     "rank": ev.rank}


def _on_capacity(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.capacity[ev.rank] = dict(ev.fields)
    if run.capacity_evidence is None or ev.rank == run.capacity_evidence.rank:
        run.capacity_evidence = _ev(ev, src, n, text)


def _on_weight_begin(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    if ev.get("avail_gib") is not None:
        run.weights_begin[ev.rank] = ev.get("avail_gib")


def _on_weight_end(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    info = dict(ev.fields)
    info["evidence"] = _ev(ev, src, n, text)
    if _is_draft_class(info.get("model_class")):
        # A draft model's load must not overwrite the target's memory figures.
        info["line"] = n
        run.draft_weights[ev.rank] = info
        return
    run.weights[ev.rank] = info


def _on_pool_end(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    if ev.get("avail_gib") is not None:
        run.memory_pool_end[ev.rank] = ev.get("avail_gib")


def _on_cuda_graph(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.cuda_graph[ev.rank] = dict(ev.fields)


def _on_oom(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
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


def _on_unbalanced(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.mem_unbalanced = _bump(run.mem_unbalanced, ev, src, n, text)


def _on_capped(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.max_total_tokens_capped = _bump(run.max_total_tokens_capped, ev, src, n, text)


def _track_usage(rt: Runtime, ev: Event, src: str, n: int, text: str) -> float | None:
    f = ev.fields
    u = f.get("token_usage")
    if u is None:
        u = f.get("full_token_usage")
    if u is not None:
        rt.last_token_usage = u
        peak = rt.peak_token_usage
        if peak is None or u > peak:
            rt.peak_token_usage = u
            rt.peak_token_usage_evidence = _ev(ev, src, n, text)
        if u >= 0.95:  # Runtime.SATURATION
            streak = rt.saturated_streak = rt.saturated_streak + 1
            if not rt.saturated_broken:
                rt.saturated_prefix += 1
            if streak > rt.saturated_longest:
                rt.saturated_longest = streak
                if rt.saturated_evidence is None:
                    rt.saturated_evidence = _ev(ev, src, n, text)
        elif rt.saturated_streak or not rt.saturated_broken:
            rt.saturated_streak = 0
            rt.saturated_broken = True
    running = f.get("running_req")
    if running is not None:
        rt.last_running_req = running
        peak_r = rt.peak_running_req
        if peak_r is None or running > peak_r:
            rt.peak_running_req = running
    queue = f.get("queue_req")
    if queue is not None:
        rt.last_queue_req = queue
        peak_q = rt.peak_queue_req
        if peak_q is None or queue > peak_q:
            rt.peak_queue_req = queue
            rt.peak_queue_evidence = _ev(ev, src, n, text)
        # Growth is judged decode line to decode line: a prefill line repeats a queue it saw.
        if ev.kind == "decode_batch":
            prev = rt.last_decode_queue
            if prev is None:
                if rt.first_decode_queue is None:
                    rt.first_decode_queue = queue
            elif queue > prev:
                streak = rt.queue_growth_streak = rt.queue_growth_streak + 1
                if not rt.queue_dropped:
                    rt.queue_growth_prefix += 1
                if streak > rt.queue_growth_longest:
                    rt.queue_growth_longest = streak
            elif queue < prev:
                rt.queue_growth_streak = 0
                rt.queue_dropped = True
            rt.last_decode_queue = queue
    if ev.ts:
        rt.last_ts = ev.ts
    return u  # type: ignore[no-any-return]


def _on_prefill(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    rt = run.runtime
    rt.prefill_batches += 1
    _track_usage(rt, ev, src, n, text)


def _on_decode(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    rt = run.runtime
    rt.decode_batches += 1
    u = _track_usage(rt, ev, src, n, text)
    g = ev.fields.get("gen_throughput")
    if g is not None and not _finite(g):
        g = None  # inf/nan from a mangled line: no throughput, not a crash
    if g is not None:
        rt.last_gen_throughput = g
        rt.gen_throughput_centi += int(g * 100 + 0.5)
        rt.gen_throughput_n += 1
    f = ev.fields
    rt.timeline.append(_new_point(TimelinePoint, (ev.ts, n, u, f.get("running_req"),
                                                  f.get("queue_req"), g, False)))


def _on_retraction(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    rt = run.runtime
    rt.retractions += 1
    rt.retracted_reqs += ev.get("retracted_reqs") or 0
    before, after = ev.get("new_token_ratio_before"), ev.get("new_token_ratio_after")
    if rt.new_token_ratio_first is None and before is not None:
        rt.new_token_ratio_first = before
    if after is not None:
        rt.new_token_ratio_last = after
    rt.retraction_evidence = _bump(rt.retraction_evidence, ev, src, n, text)
    # A marker only: its values are left empty so that the point does not depend on what was
    # read before it (chunked reads must build the same timeline).
    rt.timeline.append(TimelinePoint(ev.ts, n, None, None, None, None, True))


_HANDLERS = {
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
    "cuda_graph_end": _on_cuda_graph,
    "oom": _on_oom,
    "mem_unbalanced": _on_unbalanced,
    "max_total_tokens_capped": _on_capped,
    "prefill_batch": _on_prefill,
    "decode_batch": _on_decode,
    "retraction": _on_retraction,
}
