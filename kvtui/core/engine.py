"""The engine seam: what kvtui needs to know about one LLM server (SGLang, vLLM, ...).

Why a protocol: the core folds engine-neutral events (`parsers.kinds`) into engine-neutral facts,
and every alert rule and every pane speaks those facts. What differs between engines is how a
line reads, how the release is dated, which flag fixes what, and how the engine sizes its KV
pool; each engine package (`kvtui/engines/<name>/`) provides exactly that behind this protocol,
and the core loads it by name (harlequin's adapter pattern), so adding an engine touches its own
package and one line of `ENGINE_MODULES` (or one `register` call, for an engine kvtui does not
ship). The protocol is three small ones, by job: `Grammar` (how a line reads), `ReleaseDating`
(which release wrote it) and `Sizing` (how the engine sizes its pool); `Run` is what the core's
run object offers them.

The core never imports an engine package statically (tests/test_layering.py): engines sit above
the core and use its types.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Protocol

from kvtui.core.capacity.calculator import Calculator
from kvtui.core.checkpoint.kvnames import KVScaleRules as KVScaleRules
from kvtui.core.engine_names import ENGINE_MODULES as ENGINE_MODULES
from kvtui.core.engine_names import first_name as first_name
from kvtui.core.releases import VersionRange
from kvtui.core.report_types import RunningLimit
from parsers import Event
from parsers.frames import Frame

if TYPE_CHECKING:
    from kvtui.core.accuracy_terms import AccuracyTerms
    from kvtui.core.capacity.modelspec import ModelSpec
    from kvtui.core.checkpoint.facts import CheckpointFacts



@dataclass(frozen=True, slots=True)
class Flags:
    """The server flags the fixes name (engine-specific spelling of the same knobs)."""

    kv_cache_dtype: str
    mem_fraction: str
    context_length: str
    tensor_parallel: str
    max_running_requests: str
    scales_path: str | None  # the flag that hands the engine a KV-scales file (None: none)


@dataclass(frozen=True, slots=True)
class ReleaseOption:
    """The command-line option that pins an engine's release (`--sglang-version X`)."""

    flag: str  # "--sglang-version"
    help: str

    @property
    def dest(self) -> str:
        """The argparse attribute the option fills ("sglang_version")."""
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True, slots=True)
class DiscoverySigns:
    """What gives an engine's server away on a host, for SSH discovery: shell `case` patterns
    of its server's command line (`*sglang.launch_server*`, where `"$US"` separates argv
    elements), of its container images, and extended-regex alternatives
    that a log file of its holds (`server_args=`)."""

    process_patterns: tuple[str, ...]
    image_patterns: tuple[str, ...]  # a docker image or command, a pod's containers
    log_signs: tuple[str, ...]


class ColumnGrammar(Protocol):
    """An engine's column route: the dominant runtime layouts of a block in one pass.

    `rows(lines)` gives one row per line, (head, running, usage, gen, queue, tput, other), or
    None (`tput`: a prefill row's input throughput, empty where it prints none);
    `head_facts(head)` gives the (ts, rank) of a row's head (ts None: not a real prefix).
    """

    def rows(self, lines: list[str]) -> list[tuple[str, str, str, str, str, str, str]] | None: ...

    def head_facts(self, head: str) -> tuple[str | None, str | None]: ...


class Run(Protocol):
    """What the core's run object (`kvtui.core.state.Run`, one server start) offers the seam.

    Why a protocol and not the class: the engines sit above the core and may read the class,
    but the seam's signatures name only what an engine needs, so a new engine (or a test's)
    knows what it may rely on. Read-only: an engine never writes to the run. The sizing
    modules read more of the run than this (its pools, weights, memory profile) through the
    concrete class; what they read is the calculator's business (`Sizing.calculator`)."""

    @property
    def index(self) -> int: ...

    @property
    def server_args(self) -> Mapping[str, object]:
        """The start's arguments as the engine dumped them ({} before a dump)."""

    @property
    def engine_version(self) -> str | None:
        """The release the log printed, when it printed one."""

    @property
    def hints(self) -> AbstractSet[str]:
        """The format features of its lines (`Grammar.hints`): what dates the release."""

    @property
    def kinds_seen(self) -> AbstractSet[str]:
        """The event kinds its lines gave (`parsers.kinds`)."""

    @property
    def ranks(self) -> AbstractSet[str]:
        """The rank tags its lines carried."""

    @property
    def capacity(self) -> Mapping[str | None, Mapping[str, object]]:
        """Per rank, the capacity line's figures (`max_total_num_tokens`, `context_len`, ...)."""


class Grammar(Protocol):
    """How the engine's log reads: its lines, its tracebacks, where a server start begins."""

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

    def tag_floors(self, run: Run) -> Mapping[str, tuple[int, str]]:
        """{degree: (least size, why)} where this run's rank tags prove more than their index
        (an engine that tags a degree only when it exceeds 1: `TP0` proves TP >= 2); a degree
        left out proves its highest index + 1 (`kvtui.core.deployment.proven`). (1, why) for a
        degree with no tag: the lines that would carry one have none, so it is 1 (inferred).
        {} for an engine whose tags prove nothing more."""

    def transfer_failure(self, text: str) -> tuple[str, str] | None:
        """(kind, side) when the raw line says a prefill/decode KV transfer failed (kind:
        handshake | transfer | bootstrap; side: prefill | decode | either), else None: what
        the fleet's `fleet-kv-transfer-failing` counts (`kvtui.core.fleet.transfer`)."""


class ReleaseDating(Protocol):
    """Which of the engine's releases a log comes from, and what a release changes."""

    # How the user pins a release on the command line (`--sglang-version`): the CLI adds
    # one such option per engine (`release_options`).
    release_option: ReleaseOption

    def version_range(self, run: Run, known: str | None = None) -> VersionRange:
        """The releases a run's lines are consistent with (`known`: a release the user or the
        checkpoint's host named)."""

    def check_release(self, text: str) -> str:
        """A release the user names (`release_option`), as kvtui writes it; ValueError (one
        line) for one whose sizing code kvtui has not read."""

    def kv_dtype_advice(self, dtype: str, run: Run, checkpoint: CheckpointFacts | None = None,
                        *, release: str | None = None) -> str:
        """The flag (with its caveats) that gives a `dtype` KV cache on this run's releases
        (`release`: the one the user pinned)."""


class Sizing(Protocol):
    """How the engine sizes its KV pool, and the limits it puts on what runs at once."""

    # The KV dtypes its calculator sizes (canonical names, `kvtui.core.dtypes`), the what-if's
    # default rows first: what `kvtui whatif --dtype` accepts for this engine.
    kv_dtypes: tuple[str, ...]

    def calculator(self, run: Run, model: ModelSpec | str | None = None,
                   checkpoint: CheckpointFacts | None = None, *,
                   release: str | None = None, tp: int | None = None,
                   attn_dp: int | None = None, page_size: int | None = None,
                   context_len: int | None = None) -> Calculator | None:
        """The what-if calculator for a run, or None when the run has no pool facts (`tp`,
        `attn_dp`, `page_size`, `context_len`: the user's overrides of what the log says)."""

    def plan(self, spec: ModelSpec | None, spec_reason: str, *, current_dtype: str,
             tokens: int | None, context_len: int | None, tp: int, attn_dp: int,
             page_size: int | None, pool_gib: float | None, release: str | None) -> Calculator:
        """The what-if calculator of a deployment without a log (`kvtui whatif --model M
        --tp N --pool-gib G`): a pool of `pool_gib` per GPU, or of `tokens`, in `current_dtype`.
        ValueError (one line) for an input the engine has no counterpart of."""

    def fp8_scales_inline(self, run: Run,
                          checkpoint: CheckpointFacts | None = None) -> str | None:
        """Why this run's FP8 KV cache keeps scales of its own beside its values (a per-tile
        layout), so that the engine's "scales of 1.0" warning does not apply; None when the
        cache reads the static per-layer scales, or when the log does not show which."""

    def running_limit(self, run: Run, checkpoint: CheckpointFacts | None = None, *,
                      release: str | None = None) -> RunningLimit | None:
        """The cap on requests running at once under the engine's own name, when its capacity
        line does not state it (None: the capacity line's max_running_requests is the cap)."""


class Engine(Grammar, ReleaseDating, Sizing, Protocol):
    """One engine behind the seam: its grammar, its release dating, its sizing, and the words
    and signs the texts, the CLI and SSH discovery need of it."""

    name: str  # "sglang": the report's `engine`
    label: str  # "SGLang": how texts name it
    # The Python distribution the engine installs as (`pip show sglang`): how the checkpoint's
    # host is asked which release it runs (`kvtui.sources.ssh.checkpoint.engine_versions`).
    package: str
    # What gives the engine's server away on a host (`kvtui.sources.ssh.discover`).
    discovery: DiscoverySigns
    # Which checkpoint tensors it loads as KV-cache scales (`kvtui.core.checkpoint`).
    kv_scales: KVScaleRules
    flags: Flags
    # The accuracy checklist's terms (`kvtui.core.accuracy`); None: the engine states none.
    accuracy: AccuracyTerms | None
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

    def http_port(self, server_args: Mapping[str, object]) -> int | None:
        """The port the server's HTTP API listens on, from its logged arguments and the
        engine's default (None: the engine serves none): what a router's URL names."""

    def metrics_endpoint(self, server_args: Mapping[str, object]) -> tuple[int | None, str]:
        """(port, why): the loopback port the server serves its Prometheus /metrics on, from
        its logged arguments (`Run.server_args`, {} before the log showed them) and the
        engine's defaults; port None (why says it) when the arguments show the server does
        not serve /metrics. What `kvtui ssh` scrapes when no --metrics-port is given."""


def tag_floors(engine: Engine | None, run: Run) -> Mapping[str, tuple[int, str]]:
    """The engine's `tag_floors` of a run ({} when no engine)."""
    return engine.tag_floors(run) if engine is not None else {}


def retraction_groups(engine: Engine | None) -> frozenset[str] | None:
    """The engine's retraction grouping (None, every line counts, when no line named it)."""
    return engine.retraction_groups if engine is not None else None


def metrics_endpoint(engine: Engine | None,
                     server_args: Mapping[str, object]) -> tuple[int | None, str]:
    """`Engine.metrics_endpoint`, or (None, why) while no line has named the engine."""
    if engine is None:
        return None, "the engine is not known yet (no server start in the log)"
    return engine.metrics_endpoint(server_args)


def term(engine: Engine | None, key: str) -> str:
    """The engine's name for the report's capacity figure `key` (the key itself by default)."""
    return str(engine.terms.get(key, key)) if engine is not None else key


def figure(engine: Engine | None, key: str, value: str) -> str:
    """The capacity figure `key`, already formatted as `value`, in the engine's words
    (`Engine.figure_formats`; `term=value` by default)."""
    form = engine.figure_formats.get(key) if engine is not None else None
    return (form or "{term}={value}").format(term=term(engine, key), value=value)


def register(name: str, module: str) -> None:
    """Put the engine whose `ENGINE` object `module` holds behind the seam, detected after
    the engines already known. Why a function: an engine kvtui does not ship (a plugin, a
    test's) joins without an edit of this file; `unregister` takes it out again."""
    ENGINE_MODULES[name] = module
    load.cache_clear()


def unregister(name: str) -> None:
    """Take a `register`ed engine out (KeyError for one never registered)."""
    del ENGINE_MODULES[name]
    load.cache_clear()


def release_options() -> tuple[ReleaseOption, ...]:
    """Every engine's release option, in detection order: what the CLI adds to a command
    that applies an engine's sizing rules. Read from each engine's light `flags` module
    (`RELEASE_OPTION`), so that building the parser (`--help`) imports no engine's calculator."""
    return tuple(importlib.import_module(f"{module}.flags").RELEASE_OPTION
                 for module in ENGINE_MODULES.values())


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


def packages() -> dict[str, str]:
    """{Python distribution: engine name} of every engine (`Engine.package`)."""
    return {engine.package: engine.name for engine in all_engines()}
