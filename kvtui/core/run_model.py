"""A run's model: what one server start ("run") printed of its pools, capacity, weights and
notices, with the first evidence line of each fact (`Run`, `Pool`, `Notice`), and the
timestamp and rank orders that segmentation (`kvtui.core.state`) and the report share.

Filled by the fold handlers (`kvtui.core.run_handlers`), one per event kind; which run an event
goes to is the segmentation's job (`kvtui.core.state.State`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvtui.core import dtypes
from kvtui.core.evidence import Evidence
from kvtui.core.runtime import Runtime
from parsers import Event
from parsers.prefix import ts_day, ts_seconds


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


# The dump fields that say a speculative-decoding draft is configured (SGLang's, vLLM's).
_SPECULATIVE_ARGS = ("speculative_algorithm", "speculative_draft_model_path",
                     "speculative_method", "num_speculative_tokens")


def _speculative(run: Run) -> bool:
    return any(run.server_args.get(k) not in (None, False, 0, "", "None")
               for k in _SPECULATIVE_ARGS)
