"""Two server runs side by side: what changed between them and what it did (`kvtui compare`).

Why a module of its own: users compare runs by hand today (two logs' `#tokens` / `GPU KV cache
size` lines pasted side by side across releases, engines, KV dtypes and memory settings); the
comparison is one typed value (`Comparison`) that the command prints as text or JSON and the
TUI's compare view shows. The prediction closes the deploy loop: the earlier run's what-if,
asked through its engine's own calculator for the later run's setting (KV dtype, memory
fraction, TP), beside what the later run logged.

Pure: it reads two runs (their reports and their fold's runs), nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kvtui.core.report_types import OMIT_NONE, ArgChange, Json, Report, _fields_json
from kvtui.core.runs import arg_changes
from kvtui.core.state import Run

if TYPE_CHECKING:
    from kvtui.core.capacity.calculator import Calculator
    from kvtui.core.engine import Engine

# A prediction agrees when the logged pool is within this share of it: the engines page-align
# and round their budgets, so a rule that holds to the page gives a ratio of 1.000 at three
# digits; anything further is said to disagree.
AGREES_WITHIN = 0.0005


@dataclass(frozen=True, slots=True)
class RunRef:
    """One side of a comparison: how the user named it (`FILE#N`), its number in its log, its
    report (built as if it were the log's last run), its fold's run and its engine."""

    label: str
    number: int
    report: Report
    run: Run
    engine: Engine | None = None


@dataclass(frozen=True, slots=True)
class Side:
    label: str
    run: int
    engine: str | None
    engine_version: str | None
    model: str | None
    start_line: int | None
    start_ts: str | None

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class Row:
    """One figure of both runs; `changed` when they differ."""

    name: str
    a: Any
    b: Any
    # how the text says a and b where it words a value (check's `scales_said`); not in JSON
    said: tuple[str, str] | None = None

    @property
    def changed(self) -> bool:
        return bool(self.a != self.b)

    def to_json(self) -> Json:
        return {"name": self.name, "a": self.a, "b": self.b, "changed": self.changed}


@dataclass(frozen=True, slots=True)
class AlertDiff:
    """An alert rule and where it stands: raised by both runs, only the first (resolved), or
    only the second (new)."""

    rule: str
    severity: str
    title: str
    status: str  # present | resolved | new

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class Throughput:
    """The median generation throughput (whole tok/s) of both runs' decode lines at one
    running-request count."""

    running: int
    a: float
    b: float

    @property
    def change(self) -> float | None:
        """b against a, as a share (-0.25: 25 % slower)."""
        return round(self.b / self.a - 1, 4) if self.a else None

    def to_json(self) -> Json:
        return {"running": self.running, "a": self.a, "b": self.b, "change": self.change}


# What a prefill throughput figure is, said beside it: the engines print a rate over an
# interval, idle time included (kvtui/core/runtime.py `prefill_by_tput`), so two runs' medians
# compare the engine's prefill speed only under a like load.
PREFILL_NOTE = ("approximate: each figure is a rate over an interval, idle time included "
                "(SGLang: since the previous prefill line; vLLM: the logging interval); like "
                "for like only under a like load")


@dataclass(frozen=True, slots=True)
class PrefillThroughput:
    """The median prefill throughput (whole tok/s) of both runs' lines that print a non-zero
    one, and how many lines each median is of."""

    a: float
    b: float
    a_lines: int
    b_lines: int
    note: str = PREFILL_NOTE

    @property
    def change(self) -> float | None:
        """b against a, as a share (-0.25: 25 % slower)."""
        return round(self.b / self.a - 1, 4) if self.a else None

    def to_json(self) -> Json:
        return {"a": self.a, "b": self.b, "change": self.change, "a_lines": self.a_lines,
                "b_lines": self.b_lines, "note": self.note}


@dataclass(frozen=True, slots=True)
class RuntimeDiff:
    """The runtime measured like for like: only at the running counts both runs served."""

    shared: tuple[Throughput, ...]
    single: Throughput | None  # at 1 running request
    aggregate: Throughput | None  # at the highest shared count
    rows: tuple[Row, ...]
    # Measured when both runs print a non-zero prefill throughput; else why not.
    prefill_throughput: PrefillThroughput | str

    def to_json(self) -> Json:
        pt = self.prefill_throughput
        return {"shared": [t.to_json() for t in self.shared],
                "single": self.single.to_json() if self.single else None,
                "aggregate": self.aggregate.to_json() if self.aggregate else None,
                "rows": [r.to_json() for r in self.rows],
                "prefill_throughput": pt if isinstance(pt, str) else pt.to_json()}


@dataclass(frozen=True, slots=True)
class Prediction:
    """The earlier run's what-if for the later run's setting beside what the later run
    logged: `ratio` is logged / predicted."""

    from_run: str
    setting: str
    predicted_tokens: int
    logged_tokens: int
    ratio: float
    agrees: bool
    note: str | None = field(default=None, metadata=OMIT_NONE)

    def describe(self) -> str:
        head = (f"what-if from {self.from_run}: {self.predicted_tokens:,} tokens for "
                f"{self.setting}; logged {self.logged_tokens:,}: ratio {self.ratio:.3f}")
        if self.agrees:
            return head + " (holds)"
        return head + f" (disagrees{': ' + self.note if self.note else ''})"

    def to_json(self) -> Json:
        return _fields_json(self)


@dataclass(frozen=True, slots=True)
class Comparison:
    a: Side
    b: Side
    args: tuple[ArgChange, ...]
    args_note: str | None
    facts: tuple[Row, ...]
    fits: tuple[Row, ...]  # requests of each context length that fit, per run
    alerts: tuple[AlertDiff, ...]
    runtime: RuntimeDiff
    prediction: Prediction | None
    prediction_note: str | None

    def to_json(self) -> Json:
        from kvtui import __version__

        return {
            "kvtui_version": __version__,
            "a": self.a.to_json(), "b": self.b.to_json(),
            "args": [c.to_json() for c in self.args],
            "args_note": self.args_note,
            "facts": [r.to_json() for r in self.facts],
            "fits": [r.to_json() for r in self.fits],
            "alerts": [a.to_json() for a in self.alerts],
            "runtime": self.runtime.to_json(),
            "prediction": self.prediction.to_json() if self.prediction else None,
            "prediction_note": self.prediction_note,
        }


def _side(ref: RunRef) -> Side:
    r = ref.report
    summary = r.runs[-1] if r.runs else None
    start = ref.run.start
    return Side(label=ref.label, run=ref.number, engine=r.engine,
                engine_version=summary.engine_version if summary else None,
                model=r.model.name, start_line=start.line if start else None,
                start_ts=start.ts if start else ref.run.opened_ts)


def _pool_tokens(r: Report) -> int | None:
    summary = r.runs[-1] if r.runs else None
    if summary is not None and summary.pool_size is not None:
        return summary.pool_size
    return r.capacity.max_total_num_tokens if r.capacity else None


def _max_running(r: Report) -> Any:
    cap = r.capacity
    if cap is None:
        return None
    if cap.max_running_requests is not None:
        return cap.max_running_requests
    return cap.running_limit.describe() if cap.running_limit else None


def _model_names(a: Report, b: Report) -> tuple[str | None, str | None]:
    """Both runs' model as one kind of name: a run without a dump is known by its class only,
    so both are (a served name against a class is no change of model)."""
    named = [m.served_name or m.path for m in (a.model, b.model)]
    if all(named) or not (a.model.model_class and b.model.model_class):
        return a.model.name, b.model.name
    return a.model.model_class, b.model.model_class


def _facts(a: Report, b: Report) -> tuple[Row, ...]:
    sa, sb = a.runs[-1] if a.runs else None, b.runs[-1] if b.runs else None

    def bpt(s: Any) -> Any:
        return s.bytes_per_token if s is not None else None

    rows = [
        Row("engine", a.engine, b.engine),
        Row("engine_version", sa.engine_version if sa else None,
            sb.engine_version if sb else None),
        Row("model", *_model_names(a, b)),
        Row("tp", a.parallel.tp, b.parallel.tp),
        Row("kv_dtype_configured", a.kv_cache.configured_dtype, b.kv_cache.configured_dtype),
        Row("kv_dtype_effective", a.kv_cache.effective_dtype, b.kv_cache.effective_dtype),
        Row("kv_scales", a.kv_cache.scales, b.kv_cache.scales,
            said=(a.kv_cache.scales_said, b.kv_cache.scales_said)),
        Row("bytes_per_token", bpt(sa), bpt(sb)),
        Row("pool_tokens", _pool_tokens(a), _pool_tokens(b)),
        Row("max_running_requests", _max_running(a), _max_running(b)),
        Row("context_len", a.capacity.context_len if a.capacity else None,
            b.capacity.context_len if b.capacity else None),
    ]
    return tuple(rows)


def _concurrency(r: Report) -> dict[str, Any]:
    """The requests of each context length the run's own pool holds (its what-if's current
    row, the engine's arithmetic)."""
    if r.whatif is None:
        return {}
    row = r.whatif.scenario(r.whatif.current.dtype) if r.whatif.current.has("dtype") else None
    return dict(row.concurrency) if row is not None else {}


def _fits(a: Report, b: Report) -> tuple[Row, ...]:
    ca, cb = _concurrency(a), _concurrency(b)
    lengths = sorted({*ca, *cb}, key=lambda k: int(k) if str(k).isdigit() else 0)
    return tuple(Row(str(n), ca.get(n), cb.get(n)) for n in lengths)


def _alerts(a: Report, b: Report) -> tuple[AlertDiff, ...]:
    ra = {x.rule: x for x in a.alerts}
    rb = {x.rule: x for x in b.alerts}
    out = [AlertDiff(x.rule, x.severity, x.title, "present" if x.rule in rb else "resolved")
           for x in a.alerts]
    out += [AlertDiff(x.rule, x.severity, x.title, "new") for x in b.alerts if x.rule not in ra]
    return tuple(out)


def _runtime(a: RunRef, b: RunRef) -> RuntimeDiff:
    ga, gb = a.run.runtime.gen_by_running, b.run.runtime.gen_by_running
    shared = []
    for n in sorted(set(ga) & set(gb)):
        ma, mb = a.run.runtime.gen_median(n), b.run.runtime.gen_median(n)
        if n > 0 and ma is not None and mb is not None:
            shared.append(Throughput(n, ma, mb))
    single = next((t for t in shared if t.running == 1), None)
    aggregate = shared[-1] if shared else None
    ta, tb = a.report.runtime, b.report.runtime
    rows = (
        Row("decode_batches", ta.decode_batches, tb.decode_batches),
        Row("peak_running_req", ta.peak_running_req, tb.peak_running_req),
        Row("peak_token_usage", ta.peak_token_usage, tb.peak_token_usage),
        Row("retractions", ta.retractions, tb.retractions),
        Row("retracted_reqs", ta.retracted_reqs, tb.retracted_reqs),
        Row("peak_queue_req", ta.peak_queue_req, tb.peak_queue_req),
        Row("queue_growth_longest", ta.queue_growth_longest, tb.queue_growth_longest),
    )
    return RuntimeDiff(shared=tuple(shared), single=single, aggregate=aggregate, rows=rows,
                       prefill_throughput=_prefill(a, b))


def _prefill(a: RunRef, b: RunRef) -> PrefillThroughput | str:
    """Both runs' median prefill throughput, or why it is not compared: a run whose lines
    print none (SGLang before 0.5.9 prints no input throughput; a run that served no prompt)."""
    ra, rb = a.run.runtime, b.run.runtime
    ma, mb = ra.prefill_median(), rb.prefill_median()
    if ma is None or mb is None:
        lacking = [r.label for r, m in ((a, ma), (b, mb)) if m is None]
        verb = "prints" if len(lacking) == 1 else "print"
        return f"not measured: {' and '.join(lacking)} {verb} no non-zero prefill throughput"
    return PrefillThroughput(a=ma, b=mb, a_lines=ra.prefill_tput_lines,
                             b_lines=rb.prefill_tput_lines)


def _memory_value(calc: Calculator) -> tuple[str, float] | None:
    """The engine's memory fraction as the run set it (its `memory_knob`, the logged value or
    the engine's default), None when the run is sized in bytes or the value is unknown."""
    knob = calc.memory_knob()
    if knob.bytes or not isinstance(knob.value, (int, float)):
        return None
    return knob.name, float(knob.value)


def _other_model(a: Report, b: Report) -> str | None:
    """'A -> B' when the runs load two models: two model classes, or two checkpoint
    directories by name (the same checkpoint moved keeps its directory's name)."""
    ca, cb = a.model.model_class, b.model.model_class
    if ca and cb and ca != cb:
        return f"{ca} -> {cb}"
    na, nb = (m.path.rstrip("/").rsplit("/", 1)[-1].lower() if m.path else None
              for m in (a.model, b.model))
    if na and nb and na != nb:
        return f"{a.model.path} -> {b.model.path}"
    return None


def predict(a: RunRef, b: RunRef, *, model: Any = None, checkpoint: Any = None,
            release: str | None = None) -> tuple[Prediction | None, str | None]:
    """The earlier run's what-if for the later run's KV dtype, memory fraction and TP, beside
    the later run's logged pool; (None, why) when it cannot be asked."""
    if a.engine is None or b.engine is None or a.report.engine != b.report.engine:
        return None, "the runs are of different engines: no what-if of one sizes the other"
    other = _other_model(a.report, b.report)
    if other is not None:
        return None, (f"the runs serve different models ({other}): one model's what-if "
                      "does not size another's")
    calc_a = a.engine.calculator(a.run, model, checkpoint, release=release)
    calc_b = b.engine.calculator(b.run, model, checkpoint, release=release)
    if calc_a is None or calc_b is None:
        return None, "a run has no pool facts for the what-if"
    logged = calc_b.tokens
    if not isinstance(logged, int):
        return None, f"run {b.number} logged no pool size"
    dtype_a, dtype_b = a.report.kv_cache.effective_dtype, b.report.kv_cache.effective_dtype
    tp_a, tp_b = a.report.parallel.tp, b.report.parallel.tp
    mem_a, mem_b = _memory_value(calc_a), _memory_value(calc_b)
    changed: list[str] = []
    kw: dict[str, Any] = {}
    if dtype_b and dtype_b != dtype_a:
        changed.append(f"KV dtype {dtype_a} -> {dtype_b}")
    if tp_b and tp_a and tp_b != tp_a:
        changed.append(f"TP {tp_a} -> {tp_b}")
        kw["tp"] = tp_b
    if mem_a and mem_b and mem_b[1] != mem_a[1]:
        changed.append(f"{mem_b[0]} {mem_a[1]} -> {mem_b[1]}")
        kw["mem_fraction_static"] = float(mem_b[1])
    if not changed:
        return None, "no KV dtype, memory fraction or TP change between the runs to predict"
    if not dtype_b:
        return None, f"run {b.number}'s KV dtype is unknown"
    try:
        predicted, _ = calc_a.tokens_for(dtype_b, **kw)
    except (ValueError, KeyError, ZeroDivisionError) as exc:
        return None, f"the what-if of run {a.number} cannot size it: {exc}"
    if not predicted:
        return None, f"the what-if of run {a.number} cannot size {', '.join(changed)}"
    ratio = round(logged / predicted, 4)
    agrees = abs(logged / predicted - 1) <= AGREES_WITHIN
    note = None if agrees else _disagreement(a, b, kw)
    return Prediction(from_run=a.label, setting=", ".join(changed), predicted_tokens=predicted,
                      logged_tokens=logged, ratio=ratio, agrees=agrees, note=note), None


def _disagreement(a: RunRef, b: RunRef, moved: dict[str, Any]) -> str:
    """Why a prediction may miss: other flags changed, or another release sized it."""
    modelled = {"kv_cache_dtype", "tp_size", "tensor_parallel_size", *moved}
    knobs = {"mem_fraction_static", "gpu_memory_utilization"}
    others = [c.flag for c in arg_changes(a.run, b.run, b.engine)
              if c.arg not in modelled and c.arg not in knobs]
    why = []
    if others:
        why.append("other flags changed: " + ", ".join(others[:6]))
    va = a.report.runs[-1].engine_version if a.report.runs else None
    vb = b.report.runs[-1].engine_version if b.report.runs else None
    if va != vb:
        why.append(f"another release ({va or '?'} -> {vb or '?'})")
    if not a.run.server_args or not b.run.server_args:
        why.append("a run printed no argument dump, so other changes cannot be seen")
    return "; ".join(why) or "no other change is visible in the logs"


def compare(a: RunRef, b: RunRef, *, model: Any = None, checkpoint: Any = None,
            release: str | None = None) -> Comparison:
    """Run `a` (the earlier, the baseline) against run `b`."""
    args = arg_changes(a.run, b.run, b.engine if a.report.engine == b.report.engine else None)
    note = None
    if not a.run.server_args or not b.run.server_args:
        which = [r.label for r in (a, b) if not r.run.server_args]
        note = f"no argument dump in {' and '.join(which)}: the arguments cannot be compared"
    elif a.report.engine != b.report.engine:
        # Two engines name their arguments apart (and each dump states what the other's
        # lacks): only the names both dumps carry compare.
        args = tuple(c for c in args if c.before is not None and c.after is not None)
        note = (f"{a.report.engine} and {b.report.engine} name their arguments apart: only "
                f"the arguments both dumps name are compared")
    prediction, why = predict(a, b, model=model, checkpoint=checkpoint, release=release)
    return Comparison(a=_side(a), b=_side(b), args=args, args_note=note,
                      facts=_facts(a.report, b.report), fits=_fits(a.report, b.report),
                      alerts=_alerts(a.report, b.report), runtime=_runtime(a, b),
                      prediction=prediction, prediction_note=why)
