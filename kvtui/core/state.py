"""Facts folded from parser events: per rank, per pool, per server start ("run").

Why a fold and not a list of events: a deploy session can log millions of decode lines, and the
questions kvtui answers (what KV dtype is in effect, are scales missing, how big is the pool, how
hard is it pressed) need only bounded aggregates plus the *first* evidence line of each fact.
Memory therefore stays flat however long the log is.

Runs: each `server_args` dump (or a second weight load on a rank that already finished start-up,
or a weight load or pool line stamped before the same rank's own in the run: two pasted launches,
the later one above, `Run.stamped_before_rank`) begins a new run. An engine may print its start
in several parts (vLLM: the CLI's non-default args, then the engine's resolved config, from each
of several DP engines): a part not yet seen completes the current run's dump. The latest run is
current; earlier ones are kept for the report.
A pasted log may put a start below its own start-up lines: a start stamped no later than the
lines of a run with no start of its own joins that run, and so does (for the report,
`State.settled`) a start that carries nothing but its dump.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kvtui.core import dtypes
from kvtui.core.evidence import Evidence, evidence_in
from kvtui.core.runtime import Runtime, Witness
from parsers import BATCH_KINDS, KIND_TRAITS, Event
from parsers.prefix import ts_day, ts_seconds

# Format hints of an event (the engine's `hints`), recorded for the first event of each kind.
Hinter = Callable[[Event, str], Iterable[str]]

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
    configured: bool = False  # the operator set this size (the engine did not measure it)

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
        measurement with about +-0.5% noise on large pools, not an exact cell size. Sizes that
        print as 0.00 only say the buffers are under 0.005 GiB (SGLang 0.5.9
        mem_cache/memory_pool.py:652 `{k_size_GB:.2f}`): no measurement (None), never 0 B.
        """
        total = self.total_gib
        if self.kind == "mamba" or not total or not self.tokens:
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


@dataclass(slots=True)
class Notice:
    """A kind of line counted per run: the first line's evidence (its `count` says how many
    lines repeated it) and the fields of the latest one."""

    evidence: Evidence
    fields: dict[str, Any]


# Kinds folded as notices (a warning or error line that alerts read by its latest numbers).
NOTICE_KINDS = ("kv_accuracy_warning", "mamba_cap", "requests_reduced", "input_too_long",
                "process_exception", "pool_leak",
                # the accuracy checklist's lines (kvtui.core.accuracy)
                "context_override", "chat_template", "chat_format", "template_features",
                "generation_defaults", "online_quant")


@dataclass
class Run:
    """One server start: the facts of one deployment configuration."""

    index: int
    start: Evidence | None = None
    server_args: dict[str, Any] = field(default_factory=dict)
    server_args_evidence: Evidence | None = None
    # Which (form, rank) parts of the start's dump were seen, and which keys only the engine's
    # resolved parts stated (the operator's own arguments override those).
    dump_parts: set[tuple[str | None, str | None]] = field(default_factory=set)
    # Each part's fields as first printed and how many lines printed it: a data-parallel
    # sibling prints the same part again (`sibling_part`).
    dump_copies: dict[str | None, tuple[dict[str, Any], int]] = field(default_factory=dict)
    resolved_keys: set[str] = field(default_factory=set)
    # A part listed every argument the operator gave (vLLM's whole `non-default args` dict or
    # Namespace), so an argument absent from `server_args` is the engine's default.
    args_complete: bool = False
    # What the lines logged before the dump stated (SGLang's `DSA with TP mode is active`): a
    # dump cut short keeps them where it is silent.
    early_args: dict[str, Any] = field(default_factory=dict)
    # (dtype, origin, evidence) of each KV dtype line: the event's origin, but "dsa_backend"
    # for an override that is the DSA backends SGLang set for the KV dtype it resolved.
    kv_dtype_lines: list[tuple[str, str, Evidence]] = field(default_factory=list)
    engine_version: str | None = None
    scales_missing: Evidence | None = None
    qscale_missing: Evidence | None = None
    qscale_forms: set[str] = field(default_factory=set)
    scales_loaded: Evidence | None = None
    scales_path: str | None = None
    pools: dict[tuple[str | None, str | None, str], Pool] = field(default_factory=dict)
    swa_split: dict[str, Any] | None = None
    capacity: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    capacity_evidence: Evidence | None = None
    # Ranks whose last per-worker size line was not the smallest: the concurrency line that
    # follows it is that worker's, not the pool's (`_on_capacity`).
    capacity_larger: set[str | None] = field(default_factory=set)
    weights: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    # A speculative-decoding draft model (EAGLE, MTP/NextN, ...) loads on the same ranks after
    # the target: its lines are kept apart so the target stays "the" model and budget.
    draft_weights: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    weights_begin: dict[str | None, float] = field(default_factory=dict)
    memory_pool_end: dict[str | None, float] = field(default_factory=dict)
    # What the engine took out of the KV budget before sizing the pool, per rank (SGLang's
    # multimodal reserve, GiB): the sizing arithmetic subtracts it from the rest memory.
    kv_reserved: dict[str | None, float] = field(default_factory=dict)
    # the budget left after that reservation, where the engine prints it (vLLM 0.33: "KV cache
    # memory reduced to X GiB"): what the pool is sized by
    kv_budget_left: dict[str | None, float] = field(default_factory=dict)
    cuda_graph: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    # Rank -> the GiB its distributed init took; the GiB free when its graph capture began.
    dist_init: dict[str | None, float | None] = field(default_factory=dict)
    cuda_graph_begin: dict[str | None, float | None] = field(default_factory=dict)
    memory_profile: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    kv_layout: dict[str, Any] = field(default_factory=dict)
    kv_layout_evidence: Evidence | None = None
    # The places the engine assigned its processes in the parallel layout (`parallel_rank`):
    # global rank -> its index in each group that is a factor of the world; the world sizes
    # named; whether two lines gave one rank two places (then they prove nothing).
    rank_places: dict[int, dict[str, int]] = field(default_factory=dict)
    world_sizes: set[int] = field(default_factory=set)
    places_conflict: bool = False
    ooms: list[Evidence] = field(default_factory=list)
    oom_messages: list[str] = field(default_factory=list)
    mem_unbalanced: Evidence | None = None
    max_total_tokens_capped: Evidence | None = None
    # The lowest profiled capacity a "max_total_tokens=... is larger than the profiled value"
    # line reported (negative when the weights left no memory for the KV cache at all).
    profiled_tokens: int | None = None
    notices: dict[str, Notice] = field(default_factory=dict)
    # A hybrid-SWA pool's own memory line per rank (SWAKVPool mem usage), the SWA sizing mode,
    # and DeepSeek-V4's budget and sub-pools per rank.
    swa_pools: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    swa_sizing: dict[str, Any] | None = None
    dsv4_memory: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    dsv4_pools: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    runtime: Runtime = field(default_factory=Runtime)
    ranks: set[str] = field(default_factory=set)
    lines_seen: int = 0
    # Format hints seen in this run's lines (the engine's `hints`), used to date its version.
    hints: set[str] = field(default_factory=set)
    kinds_seen: set[str] = field(default_factory=set)
    # What opened the run: "start" (a dump or override line: a server start) or the first
    # event's kind (a log that begins mid-way), and that event's timestamp. The chunk join
    # relies on both.
    opener: str | None = None
    opened_ts: str | None = None
    # The latest timestamp of a line applied one by one (a paste may hold its lines out of
    # order; the column route's rows stamp `runtime.last_ts`): what tells a start printed
    # before the run's lines (`takes_start`).
    last_ts: str | None = None
    # A start joined the run after its lines (`takes_start`, `absorb_start`): the chunk join
    # leaves such a run to a sequential read.
    took_start: bool = False
    # The shape of the rank tags of the run's first ranked line that opened or joined it
    # (`tag_shape`: ("DP", "TP", "EP") for `DP1 TP1 EP1`).
    tag_shape: tuple[str, ...] | None = None
    # The number of the line that opened the run (beside `opener`: its start, or the line that
    # showed a restart without one): where the log pane marks the restart.
    first_line: int | None = None

    # -- derived facts -------------------------------------------------------------------
    @property
    def configured_kv_dtype(self) -> str | None:
        """What the operator asked for: the dump's value; `auto` (the default) when the dump
        lists every argument (`args_complete`) and not this one; None (unknown) when no dump
        said, or a dump cut short never reached the field (SGLang's parser keeps every wanted
        field, None when unseen, so the key alone proves nothing)."""
        conf = dtypes.normalize(self.server_args.get("kv_cache_dtype"))
        if conf is not None:
            return conf
        return "auto" if self.args_complete else None

    @property
    def logged_model_dtype(self) -> str | None:
        """The model dtype the first weight line that names one printed."""
        return next((d for w in self.weights.values()
                     if (d := dtypes.normalize(w.get("dtype")))), None)

    @property
    def effective(self) -> tuple[str | None, str, Evidence | None]:
        """(dtype, basis, evidence): the KV dtype SGLang actually used, and how we know.

        Preference: a "resolved" dtype line or the engine's config line (whichever came
        first), then the dtype printed on a KV pool line, then a
        model-specific override, then a fall-back line (the configured dtype not served: the
        model dtype), then a concrete configured value, then a line that names only
        the dtype's family (vLLM <= 0.19's "Using fp8 data type to store kv cache"), then (for
        `auto` on versions that print the model dtype at weight load) the model dtype.
        """
        for dtype, origin, ev in self.kv_dtype_lines:
            if origin == "resolved":
                return dtype, "kv_dtype_line", ev
            if origin == "config":
                # the engine's config line (vLLM: `kv_cache_dtype=auto, dtype=torch.bfloat16`)
                return dtype, "config_line", ev
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
            if origin == "model_default":
                return dtype, "model_default_line", ev
            if origin == "dsa_backend":
                return dtype, "dsa_backend_line", ev
        for dtype, origin, ev in self.kv_dtype_lines:
            if origin == "fallback":
                # The configured dtype is not served (SGLang 0.5.8 model_runner.py:1576-1579:
                # fp4_e2m1 without torch.float4_e2m1fn_x2): the model dtype is, when known.
                return self.logged_model_dtype or dtype, "fallback_line", ev
        warned = self.notices.get("kv_accuracy_warning")
        warned_dtype = dtypes.normalize(warned.fields.get("dtype")) if warned else None
        if warned is not None and warned_dtype:
            # The engine warns about the KV dtype it resolved (SGLang: the FP4 recipes).
            return warned_dtype, "accuracy_warning", warned.evidence
        conf = self.configured_kv_dtype
        if conf and conf != "auto":
            return conf, "server_args", self.server_args_evidence
        if self.scales_missing is not None:
            # The warning fires only for a literal fp8_e4m3 setting.
            return "fp8_e4m3", "fp8_warning", self.scales_missing
        for dtype, origin, ev in self.kv_dtype_lines:
            if origin == "family":
                return dtype, "kv_dtype_line", ev
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
        """The target model's KV pools a pool line sized (a draft model's pools are
        `draft_kv_pools`; a whole-cache budget, kind "kv" such as vLLM's "Available KV cache
        memory", is not one of them)."""
        return [p for p in self.pools.values()
                if p.kind not in ("mamba", "kv") and p.role == "target"]

    def draft_kv_pools(self) -> list[Pool]:
        pools = [p for p in self.pools.values()
                 if p.kind not in ("mamba", "kv") and p.role == "draft"]
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
    def placed_sizes(self) -> dict[str, int]:
        """The group sizes the assigned places prove exactly (`parallel_rank` field -> size),
        or {} when they prove none.

        Each group's index runs over 0..size-1 across the world, and the factor groups' sizes
        multiply to the world (or to a part of it, when an outer group the line does not name
        splits it): so once every rank of the world was seen, each size is its largest index
        + 1; and when those least sizes already multiply to the world, no size can be larger.
        Fewer places prove lower bounds only, which are left to the rank tags."""
        if self.places_conflict or len(self.world_sizes) != 1 or not self.rank_places:
            return {}
        world = next(iter(self.world_sizes))
        least: dict[str, int] = {}
        for place in self.rank_places.values():
            for group, index in place.items():
                least[group] = max(least.get(group, 0), index + 1)
        product = 1
        for size in least.values():
            product *= size
        if world % product:
            return {}
        if product == world or len(self.rank_places) == world:
            return least
        return {}

    @property
    def progressed(self) -> bool:
        """Past argument resolution: anything but the dump, the release, the KV dtype and page
        layout lines seen (vLLM resolves the latter two while it builds its config, before the
        engine prints that config)."""
        return (bool(self.kinds_seen - _RESOLUTION_KINDS) or self.runtime.decode_batches > 0)

    @property
    def started_up(self) -> bool:
        return bool(self.capacity) or self.runtime.decode_batches > 0

    def takes_start(self, ts: str | None) -> bool:
        """Does a server-start line stamped `ts` belong to this run's start-up, though it comes
        after the run's lines? So when the run has no start of its own (no dump, no release
        line) and the start is stamped no later than a line of the run: a paste that put the
        KV-cache and memory-pool lines above the `server_args` line, or two excerpts of one
        server in the wrong order. A real restart is stamped after every line before it."""
        if self.dump_parts or ts is None:
            return False
        return self.stamped_within(ts)

    def stamped_within(self, ts: str) -> bool:
        """Is `ts` no later than a line of this run (a restart is stamped after all of them)?"""
        return any(_not_after(ts, seen) for seen in (self.last_ts, self.runtime.last_ts))

    def sibling_part(self, form: str | None, fields: dict[str, Any], ts: str | None) -> bool:
        """Is a dump part this run has already seen from the same rank (vLLM's rank-less
        Ray DP engines: `DPEngineCoreActor`, v1/engine/core.py:1133 in 0.11.0, each an
        `EngineCore` that prints its config at core.py:77) a data-parallel sibling's copy of
        it, not a restart? So when it says the same as the first copy and the start states
        DP > 1, and either it is stamped no later than the run's lines (a restart is stamped
        after every line before it: `takes_start`'s rule) or fewer copies than DP engines were
        seen and the run has not served a batch yet."""
        first, copies = self.dump_copies.get(form, (None, 0))
        if first is None or first != fields:
            return False
        dp = self.server_args.get("dp_size") or self.placed_sizes.get("dp_rank")
        if not isinstance(dp, int) or dp < 2:
            return False
        if ts is not None and self.stamped_within(ts):
            return True
        return copies < dp and self.runtime.decode_batches == 0

    def stamped_before_rank(self, ev: Event, kind: str) -> bool:
        """Is a start-up line (a weight load's begin, a pool line) stamped before the same
        line of the same rank in this run? Then it is another start's: a paste of two launches
        with the later one above (sgl-project/sglang#11309). A draft model's weight load and
        pool, and a post-capture re-sizing, come after the target's (they are never stamped
        before it); ranks are compared with themselves only (processes interleave their
        lines a second apart)."""
        if ev.ts is None or ev.get("post_capture") or ev.get("draft"):
            return False
        if kind == "kv_pool":
            held = self.pools.get((ev.rank, ev.get("label"), pool_kind(ev)))
            seen = held.evidence if held is not None and held.role == "target" else None
        else:
            target = self.weights.get(ev.rank)
            seen = target.get("evidence") if target is not None else None
        return isinstance(seen, Evidence) and _before(ev.ts, seen.ts)

    def pool_again(self, ev: Event) -> bool:
        """Is a KV pool line a second target pool of a rank that already sized one, in a run
        with no speculative draft (whose pool follows the target's on the same rank) and no
        post-capture re-sizing? Then the server sized its pool again: a restart whose dump
        was not captured. A whole-cache budget (kind "kv") restates itself with a draft's
        layers, so it never counts."""
        if ev.get("post_capture") or ev.get("draft") or self.draft_weights \
                or _speculative(self):
            return False
        kind = pool_kind(ev)
        if kind == "kv":
            return False
        held = self.pools.get((ev.rank, ev.get("label"), kind))
        return held is not None and held.role == "target" and not held.post_capture \
            and self.started_up

    def weights_again(self, ev: Event) -> bool:
        """Is a weight load's end a second load of the same model on a rank that already
        loaded it, after the run started up (its capacity line, or batches)? Then the server
        started again and its begin line was not captured. A draft model loads before the
        capacity line and names another class; the overlap commit line restates the load
        (SGLang 0.5.23 model_runner_components/startup_weight_load.py:353, :537): neither
        counts."""
        held = self.weights.get(ev.rank)
        cls = ev.get("model_class")
        return (held is not None and self.started_up and bool(cls) and not ev.get("overlap")
                and held.get("model_class") == cls)

    @property
    def args_only(self) -> bool:
        """Opened by a server start and holding nothing but its argument-resolution lines."""
        return self.opener == "start" and not self.progressed

    def takes_dump(self, start: Run) -> bool:
        """Is `start`, the run right after this one and holding nothing but a start's dump,
        this run's own start pasted below it? So when this run has no start of its own and
        got going: a real start prints its start-up lines before the next start or the log's
        end. Unless its stamp says otherwise: a dump stamped after this run's lines (or whose
        stamp cannot be compared with them, `_not_after`) is a real restart whose log was cut
        short, the same rule as `takes_start` applies while folding."""
        if not (start.args_only and start.dump_parts and self.progressed):
            return False
        return not self.dump_parts if start.opened_ts is None \
            else self.takes_start(start.opened_ts)

    def absorb_start(self, start: Run) -> None:
        """Take an args-only run's lines (`args_only`) as this run's own start: they were a
        start-up's dump that the paste put below the start-up's lines. Rebinds what it
        changes, so a shallow copy of a run can absorb without touching the original
        (`State.settled`)."""
        self.server_args = start.server_args
        self.server_args_evidence = start.server_args_evidence
        self.start = start.start
        self.dump_parts = self.dump_parts | start.dump_parts
        self.dump_copies = {**start.dump_copies, **self.dump_copies}
        self.resolved_keys = start.resolved_keys
        self.args_complete = self.args_complete or start.args_complete
        self.early_args = start.early_args
        self.kv_dtype_lines = self.kv_dtype_lines + start.kv_dtype_lines
        self.engine_version = self.engine_version or start.engine_version
        self.kv_layout = {**start.kv_layout, **self.kv_layout}
        self.kv_layout_evidence = self.kv_layout_evidence or start.kv_layout_evidence
        self.lines_seen += start.lines_seen
        self.ranks = self.ranks | start.ranks
        self.hints = self.hints | start.hints
        self.kinds_seen = self.kinds_seen | start.kinds_seen
        self.took_start = True


_RESOLUTION_KINDS = frozenset({"server_args", "kv_dtype", "engine_version", "kv_layout"})


def tag_shape(rank: str) -> tuple[str, ...]:
    """The kinds of a rank tag's parts, without their indices: `DP1 TP3 EP3` -> DP, TP, EP."""
    return tuple(part.rstrip("0123456789") for part in rank.split())


def latest_ts(known: str | None, ts: str | None) -> str | None:
    """The later of two stamps of one shape (they sort as text); of two shapes, the newer
    one in line order (`ts`)."""
    if ts is None or (known is not None and len(ts) == len(known) and ts < known):
        return known
    return ts


def _seconds(ts: str, seen: str | None) -> tuple[float, float] | None:
    """Both stamps in seconds, when both are dated: a bare time of day (SGLang 0.3's
    `[16:40:02 TP0]`) cannot tell a restart after midnight from an earlier line, so it is
    never compared."""
    if seen is None or ts_day(ts) is None or ts_day(seen) is None:
        return None
    a, b = ts_seconds(ts), ts_seconds(seen)
    return (a, b) if a is not None and b is not None else None


def _not_after(ts: str, seen: str | None) -> bool:
    """Is the stamp `ts` no later than `seen` (dated stamps only)?"""
    both = _seconds(ts, seen)
    return both is not None and both[0] <= both[1]


def _before(ts: str, seen: str | None) -> bool:
    """Is the stamp `ts` strictly earlier than `seen` (dated stamps only)?"""
    both = _seconds(ts, seen)
    return both is not None and both[0] < both[1]


def _rank_sort_key(rank: str | None) -> tuple[tuple[int, ...], str]:
    """Ranks in numeric order; the tag text breaks ties, so ranks of different shapes in one log
    (vLLM's "DP0" engine and "TP0" worker) sort the same way in every run."""
    if not rank:
        return ((-1,), "")
    nums = []
    for tok in rank.split():
        digits = "".join(ch for ch in tok if ch.isdigit())
        nums.append(int(digits) if digits else 0)
    return tuple(nums), rank


class State:
    """Folds events into runs. `apply` is the mutator (the column route of the pipeline joins
    whole stretches of runtime rows onto `current.runtime` instead); it never raises."""

    def __init__(self) -> None:
        self.runs: list[Run] = [Run(index=0)]
        self.sources: dict[str, int] = {}  # source -> lines seen
        self.events: int = 0
        self.kinds: dict[str, int] = {}
        self.hinter: Hinter | None = None  # set by the fold once the engine is known (`bind`)
        # Does a start-up line in another rank-tag shape begin another server start (`bind`:
        # the engine's `tag_shape_starts`)?
        self.shape_starts = False
        # A log client said the server started again (a container restart, `restart_notice`):
        # the next line that is folded opens a new run, dump or not.
        self.restart_pending = False

    def bind(self, engine: Any) -> None:
        """The engine's rules this fold follows, once a line named the engine."""
        self.hinter = engine.hints
        self.shape_starts = bool(engine.tag_shape_starts)

    @property
    def current(self) -> Run:
        return self.runs[-1]

    def restart_notice(self) -> None:
        """A log client saw the server start again (docker's or kubectl's restart count, a
        journald unit restarted): what follows is a new run even if its start prints no
        argument dump (a client resumed with `--since` may miss it)."""
        self.restart_pending = True

    def upto(self, count: int) -> State:
        """The state as it stood when run `count` (1-based) was the last: a shallow view whose
        `current` is that run, so the report, the alerts and the what-if of an earlier run are
        built by the same code as the last one's. Only `runs` differs; nothing is copied."""
        view = copy.copy(self)
        view.runs = self.runs[:count]
        return view

    def rename_source(self, old: str, new: str) -> None:
        """The lines read as `old` now live in the file `new` (a rotation): every piece of
        evidence from them names `new`, so it keeps pointing at the file that holds the line."""
        for ev in evidence_in(self.runs):
            if ev.source == old:
                ev.source = new
        if old in self.sources:
            self.sources[new] = self.sources.get(new, 0) + self.sources.pop(old)

    def apply(self, ev: Event, source: str, line_no: int, text: str) -> None:
        self.events += 1
        kind = ev.kind
        kinds = self.kinds
        kinds[kind] = kinds.get(kind, 0) + 1
        handler = HANDLERS.get(kind)
        if handler is None:
            return
        run = self._run_for(ev, line_no)
        run.lines_seen += 1
        if ev.rank and not ev.foreign:  # another engine's tags prove nothing of this layout
            run.ranks.add(ev.rank)
        if ev.ts:
            run.last_ts = latest_ts(run.last_ts, ev.ts)
        if self.hinter is not None and not ev.foreign and (kind not in BATCH_KINDS
                                                           or kind not in run.kinds_seen):
            run.hints.update(self.hinter(ev, text))
        if not ev.foreign:  # (what the stream's engine printed: its rules read these kinds)
            run.kinds_seen.add(kind)
        handler(self, run, ev, source, line_no, text)

    # -- run boundaries -------------------------------------------------------------------
    def _run_for(self, ev: Event, line_no: int | None = None) -> Run:
        """The run an event belongs to, opening a new one at a server start.

        SGLang resolves its arguments (and logs model-specific KV dtype overrides, the DSA
        backends and TP mode) just before it dumps them, so both the dump and such a line open
        a new run once the current one has got past argument resolution, unless the start is
        stamped no later than the run's own lines (`Run.takes_start`: a paste that put the dump
        below its start-up). A
        second weight load on a rank that already served is a restart whose dump was not
        captured; so is a weight load or a pool line stamped before the same rank's own in
        the run (`Run.stamped_before_rank`). Such a run opens with no start of its own, so
        the chunk join leaves it to a sequential read.
        """
        run = self.current
        kind = ev.kind
        # A part of the arguments logged before the dump opens the start as an override does.
        before_dump = kind == "server_args" and bool(ev.get("before_dump"))
        start = (kind == "server_args" and not ev.get("partial")) or before_dump or (
            kind == "kv_dtype" and ev.get("origin") in ("override", "model_default")) or \
            kind == "engine_version"
        if start:
            if kind in ("server_args", "engine_version") and not before_dump:
                form = ev.get("form") if kind == "server_args" else "version"
                # A part seen before is a new start; so is any part once the run got going,
                # unless another rank already printed that part (vLLM's DP engines each print
                # their config while their siblings load).
                sibling = any(f == form for f, _ in run.dump_parts)
                if (form, ev.rank) in run.dump_parts:
                    if not run.sibling_part(form, _dump_fields(ev), ev.ts):
                        run = self._new_run()
                elif run.progressed and not sibling:
                    run = self._start_in(run, ev.ts)
            elif run.progressed:
                run = self._start_in(run, ev.ts)
        elif (kind == "load_weight_begin" and ev.rank in run.weights_begin and (
                run.started_up or run.stamped_before_rank(ev, kind))) or (
                kind == "kv_pool" and (run.stamped_before_rank(ev, kind)
                                       or run.pool_again(ev))) or (
                kind == "load_weight_end" and run.weights_again(ev)) or self._shape_start(run, ev):
            run = self._new_run()
        if self.restart_pending:
            self.restart_pending = False
            if run.lines_seen and run is self.current:
                run = self._new_run()
        if ev.rank and run.tag_shape is None:
            run.tag_shape = tag_shape(ev.rank)
        if run.opener is None:
            run.opener = "start" if start else kind
            run.opened_ts = ev.ts
            run.first_line = line_no
        return run

    def _shape_start(self, run: Run, ev: Event) -> bool:
        """Every rank of one start tags its lines alike (the engine's `tag_shape_starts`): a
        start-up line in another shape after the run started up is another start; so is a
        tagged one after a start whose lines carried no tag at all (SGLang tags ranks only
        when TP > 1: a TP1 start followed by a TP2 start that printed no dump)."""
        return bool(self.shape_starts and ev.rank and run.started_up
                    and KIND_TRAITS[ev.kind].phase == "startup"
                    and tag_shape(ev.rank) != run.tag_shape)

    def _start_in(self, run: Run, ts: str | None) -> Run:
        """The run a start line stamped `ts` opens: a new one, or `run` when its stamp says it
        was printed before `run`'s lines (`Run.takes_start`)."""
        if run.takes_start(ts):
            run.took_start = True
            return run
        return self._new_run()

    def _absorbs_last(self) -> bool:
        """Is the current run a start that held only its dump, after a run with no start of
        its own (`Run.takes_dump`)?"""
        return len(self.runs) >= 2 and self.runs[-2].takes_dump(self.runs[-1])

    def _settle_args_only(self) -> None:
        """Before a new run opens: an args-only current run joins the run it was the start of
        (`_absorbs_last`)."""
        if self._absorbs_last():
            self.runs[-2].absorb_start(self.runs.pop())

    def settled(self) -> State:
        """The state as a report reads it at this line: a last run that holds only a start's
        dump (`_absorbs_last`) taken as the start of the run before it. `self` is unchanged
        (the lines still to come decide for the fold itself), so the answer is the same
        whenever the report is asked."""
        if not self._absorbs_last():
            return self
        view = copy.copy(self)
        merged = copy.copy(self.runs[-2])
        merged.absorb_start(self.runs[-1])
        view.runs = [*self.runs[:-2], merged]
        return view

    def _new_run(self) -> Run:
        self._settle_args_only()
        run = Run(index=len(self.runs))
        self.runs.append(run)
        return run


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


def _on_server_args(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
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


def _on_kv_dtype(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
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


def _on_scales_missing(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.scales_missing = _bump(run.scales_missing, ev, src, n, text)


def _on_scales_loaded(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.scales_loaded = _bump(run.scales_loaded, ev, src, n, text)
    run.scales_path = ev.get("path")


# Model classes of speculative-decoding drafts ("Load weight end. type=LlamaForCausalLMEagle3").
# Gemma 4's MTP drafter is an "Assistant" (SGLang 0.5.23 models/gemma4_mtp.py:59, :400).
_DRAFT_CLASS_MARKS = ("Eagle", "MTP", "NextN", "DFlash", "DSpark", "Draft", "Assistant")


def _is_draft_class(model_class: object) -> bool:
    return isinstance(model_class, str) and any(m in model_class for m in _DRAFT_CLASS_MARKS)


def pool_kind(ev: Event) -> str:
    """The kind of a pool line's pool. Scope "all": every KV layer of the rank in one figure
    (vLLM), attention kind not stated."""
    return "kv" if ev.get("scope") == "all" else ("mla" if ev.get("kv_gib") is not None
                                                  else "mha")


def _on_kv_pool(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
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


# Capacity facts an engine may print on lines of their own (vLLM: the pool in blocks, the
# concurrency it reaches, a forced block count), kept when the line with the tokens comes later.
_CAPACITY_PARTS = ("gpu_blocks", "cpu_blocks", "page_size", "max_concurrency",
                   "gpu_blocks_override", "default_page_size")


def _on_capacity(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
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


# The dump fields that say a speculative-decoding draft is configured (SGLang's, vLLM's).
_SPECULATIVE_ARGS = ("speculative_algorithm", "speculative_draft_model_path",
                     "speculative_method", "num_speculative_tokens")


def _speculative(run: Run) -> bool:
    return any(run.server_args.get(k) not in (None, False, 0, "", "None")
               for k in _SPECULATIVE_ARGS)


def _on_weight_begin(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    # A second begin on a rank whose target already loaded is a draft model's: the target's
    # "before" stays the memory baseline.
    if ev.get("avail_gib") is not None and ev.rank not in run.weights:
        run.weights_begin[ev.rank] = ev.get("avail_gib")


def _on_weight_end(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
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


def _on_pool_end(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    if ev.get("avail_gib") is not None:
        run.memory_pool_end[ev.rank] = ev.get("avail_gib")


def _on_cuda_graph(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.cuda_graph[ev.rank] = dict(ev.fields)


def _on_dist_init(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.dist_init[ev.rank] = ev.get("usage_gib")


def _on_graph_begin(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.cuda_graph_begin[ev.rank] = ev.get("avail_gib")


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
    profiled = ev.get("profiled")
    if isinstance(profiled, int) and (run.profiled_tokens is None
                                      or profiled < run.profiled_tokens):
        run.profiled_tokens = profiled


def _on_spec_decode(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    """Speculative decoding's acceptance (vLLM's metrics line) is an event for `kvtui events`
    and the comparisons built on it; no report figure reads it yet, so nothing is kept."""


def _on_notice(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    notice = run.notices.get(ev.kind)
    if notice is None:
        run.notices[ev.kind] = Notice(_ev(ev, src, n, text), dict(ev.fields))
    else:
        notice.evidence.count += 1
        notice.fields = dict(ev.fields)


def _on_swa_pool(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
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


def _on_swa_sizing(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.swa_sizing = {**ev.fields, "rank": ev.rank}


def _on_kv_reserved(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    gib = ev.get("reserved_gib")
    if isinstance(gib, (int, float)):
        run.kv_reserved[ev.rank] = float(gib)  # the post-capture re-sizing repeats the figure
    left = ev.get("remaining_gib")
    if isinstance(left, (int, float)):
        run.kv_budget_left[ev.rank] = float(left)


def _on_dsv4_memory(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.dsv4_memory[ev.rank] = {**ev.fields, "evidence": _ev(ev, src, n, text)}


def _on_dsv4_pool(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    # The sizes line (pool configurator) and the pool's own init line complete each other.
    known = run.dsv4_pools.setdefault(ev.rank, {})
    known.update({k: v for k, v in ev.fields.items() if v is not None})


def _on_engine_version(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.dump_parts.add(("version", ev.rank))
    if run.engine_version is None and isinstance(ev.get("version"), str):
        run.engine_version = ev.get("version")


def _on_qscale(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.qscale_missing = _bump(run.qscale_missing, ev, src, n, text)
    if ev.get("form"):
        run.qscale_forms.add(ev.get("form"))


def _on_memory_profile(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    profile = run.memory_profile.setdefault(ev.rank, {})
    profile.update((k, v) for k, v in ev.fields.items() if v is not None)


def _on_kv_layout(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.kv_layout.update((k, v) for k, v in ev.fields.items() if v is not None)
    if run.kv_layout_evidence is None:
        run.kv_layout_evidence = _ev(ev, src, n, text)


# A `parallel_rank` group -> the server_args size it proves (None: no shared name).
# The groups whose sizes the places may prove (`Run.placed_sizes`; the layout reads them:
# `kvtui.core.deployment.layout`).
_PLACE_GROUPS = ("dp_rank", "pp_rank", "tp_rank", "pcp_rank")


def _on_parallel_rank(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    rank, world = ev.get("global_rank"), ev.get("world_size")
    if not isinstance(rank, int) or not isinstance(world, int):
        return
    place = {g: i for g in _PLACE_GROUPS if isinstance(i := ev.get(g), int)}
    run.world_sizes.add(world)
    if run.rank_places.setdefault(rank, place) != place:
        run.places_conflict = True


def _on_prefill(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.runtime.add_batch(False, ev.fields, ev.ts, n, Witness(src, n, ev.rank, ev.ts, text))


def _on_decode(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.runtime.add_batch(True, ev.fields, ev.ts, n, Witness(src, n, ev.rank, ev.ts, text))


def _on_retraction(st: State, run: Run, ev: Event, src: str, n: int, text: str) -> None:
    run.runtime.add_retraction(ev.fields, ev.ts, n, Witness(src, n, ev.rank, ev.ts, text))


HANDLERS = {
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
