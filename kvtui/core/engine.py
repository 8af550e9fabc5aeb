"""The engine seam: what kvtui needs to know about one LLM server (SGLang, vLLM, ...).

Why a protocol: the core folds engine-neutral events (`parsers.kinds`) into engine-neutral facts,
and every alert rule and every pane speaks those facts. What differs between engines is how a
line reads, how the release is dated, which flag fixes what, and how the engine sizes its KV
pool; each engine package (`kvtui/engines/<name>/`) provides exactly that behind this protocol,
and the core loads it by name (harlequin's adapter pattern), so adding an engine touches its own
package and one line of `ENGINE_MODULES`.

The core never imports an engine package statically (tests/test_layering.py): engines sit above
the core and use its types.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from kvtui.core.report_types import RunningLimit
from parsers import Event
from parsers.frames import Frame

if TYPE_CHECKING:
    from kvtui.core.checkpoint import CheckpointFacts

# Engine name -> the module that holds its `ENGINE` object. Detection tries them in this order.
ENGINE_MODULES: dict[str, str] = {
    "sglang": "kvtui.engines.sglang",
    "vllm": "kvtui.engines.vllm",
}


@dataclass(frozen=True, slots=True)
class Flags:
    """The server flags the fixes name (engine-specific spelling of the same knobs)."""

    kv_cache_dtype: str
    mem_fraction: str
    context_length: str
    tensor_parallel: str
    max_running_requests: str
    scales_path: str | None  # the flag that hands the engine a KV-scales file (None: none)


class ColumnGrammar(Protocol):
    """An engine's column route: the dominant runtime layouts of a block in one pass.

    `rows(lines)` gives one row per line, (head, running, usage, gen, queue, tput, other), or
    None (`tput`: a prefill row's input throughput, empty where it prints none);
    `head_facts(head)` gives the (ts, rank) of a row's head (ts None: not a real prefix).
    """

    def rows(self, lines: list[str]) -> list[tuple[str, str, str, str, str, str, str]] | None: ...

    def head_facts(self, head: str) -> tuple[str | None, str | None]: ...


class Engine(Protocol):
    name: str  # "sglang": the report's `engine`
    label: str  # "SGLang": how texts name it
    flags: Flags
    # The sentences of the alert texts that only this engine can say (what its warning reads,
    # what its silence means), by key of `kvtui.core.alerts.WORDING`; a key it leaves out is
    # said with the core's sentence, written for SGLang, the first engine.
    wording: Mapping[str, str]
    # Does the engine's "scales are 1.0" warning come after the weights loaded (so it proves
    # the cache runs at 1.0), or whenever no scales file was given (so the checkpoint may still
    # carry scales)?
    scale_warning_after_load: bool
    # What the engine's own configuration calls the report's capacity figures, by the
    # report's key (`context_len` is vLLM's max_model_len): the texts name a figure the way
    # its user sets and greps it; a key left out is said as the report says it (SGLang's).
    terms: Mapping[str, str]
    # How the texts state a capacity figure whose wording the engine's log gives (vLLM's "GPU
    # KV cache size: N tokens"), by the report's key: a template of `{term}` and `{value}`; a
    # key left out is said `term=value`.
    figure_formats: Mapping[str, str]
    # Does every rank of one server start tag its lines in one shape, so that a start-up line
    # tagged in another shape begins another start? (SGLang: its scheduler builds the one
    # prefix from the start's configuration; vLLM: no, engine core `DP0` and workers `rank0`
    # tag one start differently.)
    tag_shape_starts: bool
    columns: ColumnGrammar | None
    # Which rank tags set apart ranks that retract on their own, when every rank of a group
    # logs the group's one retraction (SGLang: each TP rank logs it, so the ranks of one DP and
    # PP group count as their busiest); None: each retraction line is an episode of its own.
    # `kvtui.core.runtime.Runtime.retraction_counts` applies it.
    retraction_groups: frozenset[str] | None
    # Byte strings found in the lines that begin a server start (a fast scan finds them in a
    # big file without parsing it).
    start_markers: tuple[bytes, ...]
    # The markers every server start of this engine prints (a subset of start_markers): a
    # search over a whole big file looks for these only, then for the others near them.
    start_anchors: tuple[bytes, ...]
    # The KV dtypes its calculator sizes (canonical names, `kvtui.core.dtypes`), the what-if's
    # default rows first: what `kvtui whatif --dtype` accepts for this engine.
    kv_dtypes: tuple[str, ...]

    def parse_line(self, text: str) -> Event | None:
        """One line of this engine's log as an event of the shared vocabulary, or None."""

    def identifies(self, ev: Event) -> bool:
        """Does this event (from this engine's parser) prove the log is this engine's?"""

    def owns_frame(self, frame: Frame) -> bool:
        """Does this traceback frame (of a line no engine's grammar reads as an event, read
        once by the fold: `parsers.frames`) prove the log is this engine's? A frame in code of
        its own that no other engine runs: a paste that is only a traceback names its engine
        there."""

    def hints(self, ev: Event, text: str) -> Iterable[str]:
        """Format features of the first event of a kind in a run, for dating the release."""

    def version_range(self, run: Any, known: str | None = None) -> Any:
        """The releases a run's lines are consistent with (a VersionRange)."""

    def kv_dtype_advice(self, dtype: str, run: Any, checkpoint: CheckpointFacts | None = None,
                        *,
                        release: str | None = None) -> str:
        """The flag (with its caveats) that gives a `dtype` KV cache on this run's releases
        (`release`: the one the user pinned)."""

    def calculator(self, run: Any, model: Any = None,
                   checkpoint: CheckpointFacts | None = None, *,
                   release: str | None = None, **overrides: Any) -> Any:
        """The what-if calculator for a run, or None when the run has no pool facts."""

    def check_release(self, text: str) -> str:
        """A release the user names (`--sglang-version`, `--vllm-version`), as kvtui writes it;
        ValueError (one line) for one whose sizing code kvtui has not read."""

    def plan(self, spec: Any, spec_reason: str, *, current_dtype: str, tokens: int | None,
             context_len: int | None, tp: int, attn_dp: int, page_size: int | None,
             pool_gib: float | None, release: str | None) -> Any:
        """The what-if calculator of a deployment without a log (`kvtui whatif --model M
        --tp N --pool-gib G`): a pool of `pool_gib` per GPU, or of `tokens`, in `current_dtype`.
        ValueError (one line) for an input the engine has no counterpart of."""

    def fp8_scales_inline(self, run: Any,
                          checkpoint: CheckpointFacts | None = None) -> str | None:
        """Why this run's FP8 KV cache keeps scales of its own beside its values (a per-tile
        layout), so that the engine's "scales of 1.0" warning does not apply; None when the
        cache reads the static per-layer scales, or when the log does not show which."""

    def running_limit(self, run: Any, checkpoint: CheckpointFacts | None = None, *,
                      release: str | None = None) -> RunningLimit | None:
        """The cap on requests running at once under the engine's own name, when its capacity
        line does not state it (None: the capacity line's max_running_requests is the cap)."""

    def tag_floors(self, run: Any) -> Mapping[str, tuple[int, str]]:
        """{degree: (least size, why)} where this run's rank tags prove more than their index
        (an engine that tags a degree only when it exceeds 1: `TP0` proves TP >= 2); a degree
        left out proves its highest index + 1 (`kvtui.core.deployment.proven`). (1, why) for a
        degree with no tag: the lines that would carry one have none, so it is 1 (inferred)."""

    def transfer_failure(self, text: str) -> tuple[str, str] | None:
        """(kind, side) when the raw line says a prefill/decode KV transfer failed (kind:
        handshake | transfer | bootstrap; side: prefill | decode | either), else None: what
        the fleet's `fleet-kv-transfer-failing` counts (`kvtui.core.fleet.transfer`)."""


def tag_floors(engine: Engine | None, run: Any) -> Mapping[str, tuple[int, str]]:
    """The engine's `tag_floors` of a run ({} when no engine, or one that does not say)."""
    floors = getattr(engine, "tag_floors", None) if engine is not None else None
    return floors(run) if floors is not None else {}


def retraction_groups(engine: Engine | None) -> frozenset[str] | None:
    """The engine's retraction grouping (None, every line counts, when no line named it)."""
    return engine.retraction_groups if engine is not None else None


def term(engine: Engine | None, key: str) -> str:
    """The engine's name for the report's capacity figure `key` (the key itself by default)."""
    return str(engine.terms.get(key, key)) if engine is not None else key


def figure(engine: Engine | None, key: str, value: str) -> str:
    """The capacity figure `key`, already formatted as `value`, in the engine's words
    (`Engine.figure_formats`; `term=value` by default)."""
    form = engine.figure_formats.get(key) if engine is not None else None
    return (form or "{term}={value}").format(term=term(engine, key), value=value)


@cache
def load(name: str) -> Engine:
    """The engine called `name` (ValueError for an unknown name)."""
    module = ENGINE_MODULES.get(name)
    if module is None:
        raise ValueError(f"unknown engine {name!r}: choose from {', '.join(ENGINE_MODULES)}")
    engine: Engine = importlib.import_module(module).ENGINE
    return engine


def all_engines() -> Sequence[Engine]:
    return tuple(load(name) for name in ENGINE_MODULES)
