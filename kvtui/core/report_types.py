"""The analysis report as typed values: `Report`, its sections, `WhatIf`, `Scenario`, `Alert`.

Why typed: the report is built in the core and read by the text/Markdown renderers, the check
gate, the progress line, the TUI and the alert rules; a dict read back with `.get("...")` chains
hides a renamed or missing field until a user sees a dash. Every reader uses these attributes,
and JSON exists only at the edges (`--json`, `--stream`, the TUI's JSON export), through one
`to_json()` per type that produces the JSON contract byte for byte (tests/golden/*.json).

Engine-neutral: nothing here names an engine. Where two engines' what-if rows carry different
keys in a different order (SGLang's and vLLM's goldens differ), a `Scenario` / `Current` records
the keys its producer emitted (`of(**values)` keeps the order given), so the JSON stays what each
engine printed before these types existed. Nested detail objects that no reader interprets
beyond printing (server_args, a cell's arithmetic, the model spec, the checkpoint's own JSON) stay
plain JSON values inside the typed fields.

Each value is a snapshot: the report of a live log is read on the UI thread while the fold goes
on, so the builder copies what the fold keeps changing (evidence counts) into these frozen values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from kvtui.core.dtypes import CANONICAL, is_low_precision
from kvtui.core.evidence import Evidence

Json = dict[str, Any]

# Field metadata: leave the key out of the JSON when its value is None (or empty / False).
OMIT_NONE = {"omit": "none"}
OMIT_EMPTY = {"omit": "empty"}


def _plain(value: Any) -> Any:
    """A field's value as JSON: typed values through their own `to_json`, sequences as lists."""
    if isinstance(value, Evidence):
        return value.to_dict()
    to_json = getattr(value, "to_json", None)
    if to_json is not None:
        return to_json()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _fields_json(obj: Any) -> Json:
    """The dataclass's fields in declaration order (the contract's key order), each as JSON,
    with the keys the metadata marks optional left out when they hold nothing."""
    out: Json = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        omit = f.metadata.get("omit")
        if (omit == "none" and value is None) or (omit == "empty" and not value):
            continue
        out[f.name] = _plain(value)
    return out


def _keyed_json(obj: Any, keys: tuple[str, ...]) -> Json:
    return {k: _plain(getattr(obj, k)) for k in keys}


def snapshot(ev: Evidence | None) -> Evidence | None:
    """A copy of a fold's evidence that later lines (its repeat count) cannot change."""
    return dataclasses.replace(ev) if ev is not None else None


# -- alerts ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Alert:
    """One rule's finding: what happened, the line that shows it, and what to type."""

    rule: str
    severity: str  # kvtui.core.severity: critical | warning | info
    title: str
    detail: str
    evidence: Evidence | None
    fix: str
    confidence: str = "high"  # high | medium | low
    extra: Json = field(default_factory=dict, metadata=OMIT_EMPTY)

    def to_json(self) -> Json:
        return _fields_json(self)

    def frozen(self) -> Alert:
        """This alert with its evidence copied out of the fold (see `snapshot`)."""
        return dataclasses.replace(self, evidence=snapshot(self.evidence))


# -- what-if -----------------------------------------------------------------------------------
class _Keyed:
    """Values whose JSON keys (presence and order) are the producer's, recorded in `keys`."""

    __slots__ = ()
    keys: tuple[str, ...]

    @classmethod
    def of(cls, **values: Any) -> Self:
        """Built from the producer's values in the order the JSON must show them; a key that
        is not a field is a TypeError here, not a silent extra."""
        return cls(keys=tuple(values), **values)  # type: ignore[call-arg]  # subclasses' fields

    def has(self, key: str) -> bool:
        """Did the producer state this field (a JSON key, even if its value is null)?"""
        return key in self.keys

    def to_json(self) -> Json:
        return _keyed_json(self, self.keys)


@dataclass(frozen=True, slots=True)
class Scenario(_Keyed):
    """One what-if row: a KV dtype (at a TP / memory fraction) and what the engine would
    allocate for it."""

    keys: tuple[str, ...] = field(repr=False)
    dtype: str = ""
    flag: str | None = None
    flag_advice: str = ""
    current: bool = False
    tokens: int | None = None
    bytes_per_token: float | None = None
    concurrency: dict[str, float | None] = field(default_factory=dict)  # context -> requests
    max_running_requests: int | None = None
    # The values the engine's default cap can take where none is given (one, or a choice the
    # log or plan cannot settle: vLLM's V1 default by GPU), as the engine's calculator says.
    max_running_requests_default: list[int] | None = None
    vs_current: float | None = None
    approximate: bool = False
    estimate: bool = False
    basis: str | None = None
    cannot_model: str | None = None
    does_not_fit: str | None = None
    swa_tokens: int | None = None
    mamba_slots: int | None = None
    block_size: int | None = None
    tp: int | None = None
    mem_fraction_static: float | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_memory_bytes: int | None = None
    fits_target: bool | None = None


@dataclass(frozen=True, slots=True)
class Current(_Keyed):
    """The logged setting the what-if starts from, and how well the model spec explains it."""

    keys: tuple[str, ...] = field(repr=False)
    dtype: str = ""
    tokens: int | None = None
    bytes_per_token: float | None = None  # measured from the pool line when there is one
    theoretical_bytes_per_token: float | None = None
    calibration_ratio: float | None = None
    context_len: int | None = None
    page_size: int | None = None
    parallel: Json = field(default_factory=dict)
    max_running_requests_logged: int | None = None
    max_running_requests_sglang: int | None = None
    sglang_rules: str | None = None
    max_concurrency_logged: float | None = None
    # the unrounded figure the engine printed as max_concurrency_logged, where the calculator
    # reproduces it (vLLM's "%.2fx" of its own float)
    max_concurrency_exact: float | None = None
    concurrency_at_context_len: float | None = None
    cell: Json | None = None
    calibration: Json | None = None
    calibration_note: str | None = None
    swa_split: Json | None = None
    cannot_model: str | None = None
    # The rows the measured bytes_per_token divides the pool line by, where the engine's pool
    # holds more rows than tokens (SGLang's padding page): the Pools row divides by the tokens.
    measured_rows: int | None = None

    @property
    def max_running_requests(self) -> int | None:
        """The logged cap, else the one the engine's rule computes."""
        return self.max_running_requests_logged or self.max_running_requests_sglang

    @property
    def compared_bytes_per_token(self) -> int | float | None:
        """What `calibration_ratio` divides the measure by: the bytes per pool row the spec
        gives for the pool line where the engine prints another layout than it budgets (an FP8
        DSA pool stores 656 B per layer where SGLang < 0.5.17 budgets 576), else the cell."""
        printed = (self.calibration or {}).get("computed_bytes_per_token")
        if isinstance(printed, (int, float)):
            return printed
        return self.theoretical_bytes_per_token


@dataclass(frozen=True, slots=True)
class Inverse(_Keyed):
    """The inverse question: what would `concurrency` requests of `context_len` tokens in
    `dtype` take (GiB per GPU missing, the memory fraction or the TP that fits them)?"""

    keys: tuple[str, ...] = field(repr=False)
    dtype: str = ""
    context_len: int = 0
    concurrency: float = 0.0
    # the setting asked about, when not the logged one (the what-if pane's target, or
    # `kvtui whatif --target-tp / --mem-fraction-static`): `fits_now` and the missing bytes
    # are that setting's
    tp_target: int | None = None
    mem_fraction_static_target: float | None = None
    gpu_memory_utilization_target: float | None = None
    kv_cache_memory_bytes_target: int | None = None
    tokens_needed: int | None = None
    tokens_available: int | None = None
    fits_now: bool = False
    note: str | None = None
    blocks_needed: int | None = None
    bytes_per_token: float | None = None
    kv_gib_needed: float | None = None
    kv_gib_available: float | None = None
    missing_gib_per_gpu: float | None = None
    missing_rest_gib_per_gpu: float | None = None
    estimate: bool = False
    mem_fraction_static_current: float | None = None
    mem_fraction_static_needed: float | None = None
    mem_fraction_static_feasible: bool | None = None
    mem_fraction_static_note: str | None = None
    gpu_memory_utilization_current: float | None = None
    gpu_memory_utilization_needed: float | None = None
    gpu_memory_utilization_feasible: bool | None = None
    gpu_memory_utilization_note: str | None = None
    # the knob of a run sized by a KV budget in bytes (vLLM's --kv-cache-memory-bytes)
    kv_cache_memory_bytes_current: int | None = None
    kv_cache_memory_bytes_needed: int | None = None
    kv_cache_memory_bytes_feasible: bool | None = None
    kv_cache_memory_bytes_note: str | None = None
    total_gpu_gib: float | None = None
    total_gpu_basis: str | None = None
    tp_needed: int | None = None
    tp_note: str | None = None
    # the engine's cap on running requests at the setting, when below the concurrency asked
    # (SGLang: the request and Mamba state slots): the pool holds them, fewer run at once
    max_running_requests: int | None = None


@dataclass(frozen=True, slots=True)
class WhatIf:
    """The what-if: the current setting, one row per KV dtype, and the work shown."""

    current: Current
    scenarios: tuple[Scenario, ...]
    model: Json | None  # the model spec the cells were sized from
    model_reason: str
    version: Json  # the engine release range the rules follow
    explanation: tuple[str, ...]
    engine: str | None = field(default=None, metadata=OMIT_NONE)
    # The memory setting the what-if moves, when it is not the engine's usual one (its flags'
    # `mem_fraction`): name, flag, unit ("bytes"), value, and the bytes one request of
    # context_len takes in the current dtype (`request_bytes`, whole blocks).
    memory_knob: Json | None = field(default=None, metadata=OMIT_NONE)
    sizing_args: Json | None = field(default=None, metadata=OMIT_NONE)
    pools: tuple[Json, ...] | None = field(default=None, metadata=OMIT_NONE)
    mamba: Json | None = field(default=None, metadata=OMIT_NONE)
    memory_budget: Json | None = field(default=None, metadata=OMIT_NONE)
    inverse: Inverse | None = field(default=None, metadata=OMIT_NONE)
    budget_scenarios: tuple[Scenario, ...] | None = field(default=None, metadata=OMIT_NONE)

    # `engine` leads the JSON when it is given (vLLM's what-if names itself first).
    ORDER: ClassVar[tuple[str, ...]] = (
        "engine", "current", "memory_knob", "scenarios", "model", "model_reason", "version",
        "explanation", "sizing_args", "pools", "mamba", "memory_budget", "inverse",
        "budget_scenarios")

    def scenario(self, dtype: str) -> Scenario | None:
        return next((s for s in self.scenarios if s.dtype == dtype), None)

    def to_json(self) -> Json:
        fields = _fields_json(self)
        return {k: fields[k] for k in self.ORDER if k in fields}


# -- the deployment ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Source:
    name: str
    lines: int

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class ModelFacts:
    path: str | None
    served_name: str | None
    model_class: str | None
    quantization: str | None

    @property
    def name(self) -> str | None:
        """What a reader calls the model: its served name, else its path, else its class."""
        return self.served_name or self.path or self.model_class

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class ParallelFacts:
    tp: int | None
    dp: int | None
    pp: int | None
    ep: int | None
    attn_dp: int | None
    enable_dp_attention: bool | None
    ranks_seen: tuple[str, ...]
    # Where a degree came from, only when one was not in the server_args dump.
    basis: dict[str, str] | None = field(default=None, metadata=OMIT_NONE)
    # The least TP x PP worker tags numbered over both prove (`kvtui.core.deployment` Layout
    # .world), only when the log states no TP.
    world: int | None = field(default=None, metadata=OMIT_NONE)
    # The world size the engine printed (`Layout.world_size`: vLLM's rank-assignment lines).
    world_size: int | None = field(default=None, metadata=OMIT_NONE)
    # The least sizes the rank tags prove beyond their highest index (`Layout.least`: SGLang
    # tags TP, PP and EP only when they exceed 1), only when one does.
    least: dict[str, int] | None = field(default=None, metadata=OMIT_NONE)

    def degree(self, name: str) -> int | None:
        """The size of degree `name` ("tp", "dp", "pp", "ep", "world"; KeyError for another)."""
        return {"tp": self.tp, "dp": self.dp, "pp": self.pp, "ep": self.ep,
                "world": self.world}[name]

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class KVCacheFacts:
    configured_dtype: str | None
    effective_dtype: str | None
    effective_basis: str | None
    effective_evidence: Evidence | None
    scales: str | None  # loaded | missing | ... (kvtui.core.state)
    scales_evidence: Evidence | None
    quantization_param_path: str | None
    page_size: int | None

    @property
    def scales_said(self) -> str:
        """The scales as text and the TUI say them: a KV cache of 16 bits or more has none to
        load, so "unknown" there read as a question left open (issue 39). The JSON keeps the
        state as the fold holds it (`scales`)."""
        return scales_said(self.scales, self.effective_dtype)

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class PoolFacts:
    """One pool line on one rank (or a whole-cache budget, kind "kv"), with the dtype it holds
    and where that dtype was read (`dtype_basis`)."""

    rank: str | None
    label: str | None
    # mha | mla | mamba | kv | subpools (one budget sized in full-attention tokens and split
    # among sub-pools of their own sizes: DeepSeek-V4's SWA, C4, C128 and their states)
    kind: str
    dtype: str | None
    dtype_raw: str | None
    tokens: int | None
    k_gib: float | None
    v_gib: float | None
    kv_gib: float | None
    slots: int | None
    conv_gib: float | None
    ssm_gib: float | None
    role: str
    bytes_per_token: float | None
    evidence: Evidence | None
    dtype_basis: str | None
    # the operator set this size (vLLM's --kv-cache-memory-bytes), the engine did not profile
    # it; in the JSON only when true
    configured: bool = field(default=False, metadata=OMIT_EMPTY)
    # kind "subpools": the engine's bytes per full-attention token (its budget's divisor, every
    # sub-pool's share in it), and each sub-pool's size in its own unit (SWA tokens, C4/C128
    # compressed entries, state ring rows), by the engine's own name
    bytes_per_full_token: float | None = field(default=None, metadata=OMIT_NONE)
    subpools: dict[str, int] | None = field(default=None, metadata=OMIT_NONE)

    def shape(self) -> tuple[Any, ...]:
        """What two ranks' pools must share to read as one line ("TP0..TP7 (8 ranks)")."""
        return (self.label, self.kind, self.dtype, self.tokens, self.k_gib, self.v_gib,
                self.kv_gib, self.slots, self.conv_gib, self.ssm_gib, self.configured,
                self.bytes_per_full_token, tuple((self.subpools or {}).items()))

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class RunningLimit:
    """An engine's cap on the requests running at once, under the engine's own argument name.

    Why beside `CapacityFacts.max_running_requests`: that is the figure SGLang's capacity line
    prints. An engine that prints none (vLLM) states its cap here instead, from the log's
    arguments or the engine's default, so no reader shows SGLang's name with a dash for it."""

    name: str  # the engine's argument, e.g. "max_num_seqs"
    value: int | None  # None: the log does not say, or the default depends on the hardware
    basis: str  # "logged" | "default" | "not logged" (no complete argument list in the log)
    defaults: tuple[int, ...] = field(default=(), metadata=OMIT_EMPTY)  # possible defaults
    rule: str | None = field(default=None, metadata=OMIT_NONE)  # how the default is chosen

    def describe(self, number: Callable[[int], str] = "{:,}".format,
                 unknown: str = "not logged") -> str:
        """The value as readers show it: "96", "256 (default)", "256 or 1,024 (default)",
        "default" (a release whose default was not read), else `unknown`."""
        if self.value is not None:
            return number(self.value) + (" (default)" if self.basis == "default" else "")
        if self.defaults:
            return " or ".join(number(v) for v in self.defaults) + " (default)"
        return "default" if self.basis == "default" else unknown

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class CapacityFacts:
    max_total_num_tokens: int | None
    chunked_prefill_size: int | None
    max_prefill_tokens: int | None
    max_running_requests: int | None
    context_len: int | None
    available_gpu_mem_gib: float | None
    max_concurrency: float | None = field(default=None, metadata=OMIT_NONE)  # vLLM prints it
    rank: str | None = None
    memory_pool_end_avail_gib: float | None = None
    swa_split: Json | None = field(default=None, metadata=OMIT_EMPTY)
    # The engine's own cap when its capacity line states none (vLLM's max_num_seqs).
    running_limit: RunningLimit | None = field(default=None, metadata=OMIT_NONE)
    # GiB the engine took out of the KV budget before sizing the pool, for memory it allocates
    # after (the largest per rank; SGLang's multimodal reserve).
    kv_budget_reserved_gib: float | None = field(default=None, metadata=OMIT_NONE)

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class WeightFacts:
    rank: str | None
    model_class: str | None
    dtype: str | None
    quant: str | None
    usage_gib: float | None
    avail_gib: float | None
    avail_before_gib: float | None
    max_usage_gib: float | None
    min_avail_gib: float | None
    min_avail_before_gib: float | None
    ranks: int
    elapsed_s: float | None
    # A speculative-decoding draft model's own load (EAGLE, MTP/NextN; `Run.draft_weights`),
    # on its first rank; draft_ranks is how many ranks loaded it.
    draft_model_class: str | None = None
    draft_quant: str | None = None
    draft_usage_gib: float | None = None
    draft_ranks: int = 0

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class RuntimeFacts:
    """The runtime fold's summary (kvtui.core.runtime.Runtime.to_dict, field for field)."""

    prefill_batches: int = 0
    decode_batches: int = 0
    last_token_usage: float | None = None
    peak_token_usage: float | None = None
    last_running_req: int | None = None
    peak_running_req: int | None = None
    last_queue_req: int | None = None
    peak_queue_req: int | None = None
    last_gen_throughput: float | None = None
    mean_gen_throughput: float | None = None
    retractions: int = 0
    retracted_reqs: int = 0
    new_token_ratio_first: float | None = None
    new_token_ratio_last: float | None = None
    saturated_longest: int = 0
    queue_growth_longest: int = 0
    last_ts: str | None = None

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class ArgChange:
    """One server argument that differs between two runs (`kvtui.core.runs.arg_changes`):
    None on a side means that run's dump did not state it."""

    arg: str
    flag: str
    before: Any
    after: Any

    def describe(self) -> str:
        """`--kv-cache-dtype auto -> bf16` (a side the dump did not state reads "unset")."""
        def show(v: Any) -> str:
            return "unset" if v is None else str(v)
        return f"{self.flag} {show(self.before)} -> {show(self.after)}"

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class Resolution:
    """The restart that resolved an earlier run's alert: the run (numbered from 1), where it
    started, and the arguments that changed between the two (`cause`; `note` when the later
    start printed no argument dump to compare)."""

    run: int
    line: int | None
    ts: str | None
    cause: tuple[ArgChange, ...]
    note: str | None = field(default=None, metadata=OMIT_NONE)

    def describe(self) -> str:
        """"resolved by the restart at line 701: --kv-cache-dtype auto -> bf16"."""
        at = f"at line {self.line:,}" if self.line is not None else f"of run {self.run}"
        why = ", ".join(c.describe() for c in self.cause) or self.note or "no argument changed"
        return f"resolved by the restart {at} (run {self.run}): {why}"

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class RunAlert:
    """An alert of one run; an earlier run's alert that a later run no longer raises carries
    the restart that resolved it."""

    rule: str
    severity: str
    title: str
    evidence: Evidence | None
    resolved_by: Resolution | None = field(default=None, metadata=OMIT_NONE)

    def to_json(self) -> Json:
        return _fields_json(self)


def scales_said(scales: str | None, effective_dtype: str | None) -> str:
    """`KVCacheFacts.scales_said` for any run's facts (the runs list says it the same way)."""
    if scales in (None, "unknown") and not is_low_precision(effective_dtype) \
            and effective_dtype in CANONICAL:
        return f"none needed ({effective_dtype})"
    return str(scales or "?")


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One server start in the log (the report's facts are the last one's), numbered from 1
    as users see it (`FILE#N`, the TUI, the JSON), with its own facts and alerts."""

    index: int
    start: Evidence | None
    model_path: str | None
    configured_dtype: str | None
    effective_dtype: str | None
    scales: str | None
    pool_tokens: int | None
    max_total_num_tokens: int | None
    decode_batches: int
    # What opened the run: "start" (an argument dump, a release line) or the kind of the
    # line that showed a restart without one (a weight load, a pool line, a tagged line).
    opened_by: str | None = None
    engine_version: str | None = None
    tp: int | None = None
    bytes_per_token: float | None = None
    max_running_requests: int | None = None
    alerts: tuple[RunAlert, ...] = ()
    # This run's accuracy checklist (`kvtui.core.accuracy.checklist`), judged with its own alerts
    accuracy: tuple[AccuracyItem, ...] = ()
    # A run opened with no start line (no dump): where and when its first line was.
    opened_line: int | None = field(default=None, metadata=OMIT_NONE)
    opened_ts: str | None = field(default=None, metadata=OMIT_NONE)

    @property
    def pool_size(self) -> int | None:
        """The run's pool in tokens as the lists and the compare say it: its pool line's, else
        its capacity line's (vLLM prints only 'GPU KV cache size: N tokens', no pool line)."""
        return self.pool_tokens if self.pool_tokens is not None else self.max_total_num_tokens

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class AccuracyItem:
    """One line of the accuracy checklist (`kvtui.core.accuracy`): a setting that can cost the
    deployment accuracy, what the log says of it, the line that says so, and the fix where it
    costs accuracy. `state`: ok | info (stated, a trade-off the operator chose or one the log
    cannot call) | warning | critical | unknown (the log does not say)."""

    item: str  # kv_cache | weights | context | length | chat_template | parsers | generation
    label: str
    state: str
    summary: str
    evidence: Evidence | None = None
    fix: str | None = field(default=None, metadata=OMIT_NONE)
    confidence: str | None = field(default=None, metadata=OMIT_NONE)  # high | medium | low
    rule: str | None = field(default=None, metadata=OMIT_NONE)  # the alert that says it

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class Report:
    """Everything `kvtui check` says about one stream; `to_json()` is `kvtui check --json`."""

    kvtui_version: str
    sources: tuple[Source, ...]
    engine: str | None  # the engine detected (kvtui.core.engine), None: no line recognised
    model: ModelFacts
    parallel: ParallelFacts
    kv_cache: KVCacheFacts
    pools: tuple[PoolFacts, ...]
    capacity: CapacityFacts | None
    weights: WeightFacts | None
    runtime: RuntimeFacts
    server_args: Json | None
    errors: tuple[Json, ...]  # OOM lines (kvtui.core.state)
    runs: tuple[RunSummary, ...]
    whatif: WhatIf | None
    alerts: tuple[Alert, ...]
    checkpoint: Json | None = field(default=None, metadata=OMIT_NONE)  # its own JSON
    # why there is no what-if although the log gives the pools (kvtui.core.report)
    whatif_unmodelled: str | None = field(default=None, metadata=OMIT_NONE)
    partial: bool = field(default=False, metadata=OMIT_EMPTY)  # start-up lines only
    # the accuracy checklist of the current run (kvtui.core.accuracy), when an engine is known
    accuracy: tuple[AccuracyItem, ...] = field(default=(), metadata=OMIT_EMPTY)
    # what the server's /metrics scrapes fed to the session say (kvtui.core.metrics.series:
    # source, state, detail, scrapes, facts); absent when none were fed
    metrics: Json | None = field(default=None, metadata=OMIT_NONE)

    @property
    def unrecognised(self) -> bool:
        """Input was read but no line of any engine was recognised in it."""
        return self.engine is None and bool(self.sources)

    def to_json(self) -> Json:
        return _fields_json(self)


__all__ = ["AccuracyItem", "Alert", "ArgChange", "CapacityFacts", "Current", "Inverse",
           "KVCacheFacts", "ModelFacts", "ParallelFacts", "PoolFacts", "Report", "Resolution",
           "RunAlert", "RunSummary", "RunningLimit", "RuntimeFacts", "Scenario", "Source",
           "WeightFacts", "WhatIf", "scales_said", "snapshot"]
