"""SGLang behind the engine seam: its grammar, its release dating, its flags, its pool sizing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

import parsers.sglang as grammar
import parsers.sglang.frames as sglang_frames
from kvtui.core.engine import DiscoverySigns, KVScaleRules
from kvtui.core.releases import VersionRange, fmt
from kvtui.core.report_types import RunningLimit
from kvtui.engines.sglang import fromrun, plan, ranks, scales, version
from kvtui.engines.sglang.accuracy import ACCURACY
from kvtui.engines.sglang.calculator import DEFAULT_DTYPES
from kvtui.engines.sglang.cell import ELEM_BYTES
from kvtui.engines.sglang.flags import FLAGS, RELEASE_OPTION
from kvtui.engines.sglang.kvscales import KV_SCALES
from kvtui.engines.sglang.sizing.families import kv_dtype_spelling
from parsers import Event
from parsers.frames import Frame
from parsers.sglang import disagg

if TYPE_CHECKING:
    from kvtui.core.accuracy_terms import AccuracyTerms
    from kvtui.core.capacity.modelspec import ModelSpec
    from kvtui.core.checkpoint import CheckpointFacts
    from kvtui.core.engine import ColumnGrammar, Engine, Run
    from kvtui.engines.sglang.calculator import Calculator



class _Columns:
    """SGLang's column route (`parsers.sglang.bulk`)."""

    def rows(self, lines: list[str]) -> list[tuple[str, str, str, str, str, str, str]] | None:
        return grammar.runtime_rows(lines)

    def head_facts(self, head: str) -> tuple[str | None, str | None]:
        return grammar.head_facts(head)


class SGLang:
    name = "sglang"
    accuracy: AccuracyTerms | None = ACCURACY  # the accuracy checklist's terms (accuracy.py)
    label = "SGLang"
    package = "sglang"
    # `python -m sglang.launch_server`, `sglang serve` (0.5.x's CLI), and the lines of its
    # start (the args dump, the pool line, the weight loading)
    kv_scales: KVScaleRules = KV_SCALES
    discovery = DiscoverySigns(
        process_patterns=("*sglang.launch_server*", "*sglang/launch_server*",
                          '*sglang"$US"serve*', "*sglang.cli*serve*"),
        image_patterns=("*sglang*",),
        log_signs=(r"ServerArgs\(", "server_args=", "KV Cache is allocated", "sglang",
                   "Load weight begin"))
    flags = FLAGS
    release_option = RELEASE_OPTION
    wording: Mapping[str, str] = MappingProxyType({})  # the core's sentences are SGLang's
    terms: Mapping[str, str] = MappingProxyType({})  # the report's keys are SGLang's names
    figure_formats: Mapping[str, str] = MappingProxyType({})
    # "no scaling factors provided" is logged whenever --quantization-param-path is absent,
    # before the weight loader may still load k_scale/v_scale (layers/quantization/kv_cache.py).
    scale_warning_after_load = False
    columns: ColumnGrammar | None = _Columns()
    # Every TP rank logs the retraction of its group: the log line sits in
    # `update_running_batch`, which every TP rank runs (0.4.1.post4 managers/scheduler.py:927,
    # 0.5.5 :1917-1921), where the decode stats are logged by TP 0 alone (0.4.1.post4
    # :1150-1153); ranks of other DP or PP groups retract on their own.
    retraction_groups: frozenset[str] | None = frozenset({"DP", "PP"})
    # The scheduler's log prefix is `[DP..] [PP..] [ATTN_CP..] [MOE_DP..] [TP..] [EP..]`, each
    # part present by the start's configuration (0.5.8 managers/scheduler.py:2896-2903, 0.5.23
    # :6279-6291), and no other process tags its lines: every rank of one start tags alike.
    tag_shape_starts = True
    # The args dump, and the lines of argument resolution logged just before it: the
    # model-specific KV dtype overrides and the DSA backends (parsers/sglang/startup.py
    # `_KV_SETTING`, `_KV_MUSE`, `_KV_BACKEND_FP8`, `_KV_BACKENDS`), the DSA TP mode
    # (parsers/sglang/server_args.py `_TP_MODE`).
    start_markers: tuple[bytes, ...] = (
        b"server_args=", b"Setting KV cache dtype to ", b" KV cache by default for ",
        b"SA backend to ", b"SA backends for ", b"SA with TP mode is active, ")
    # every launch logs its args: sglang 0.4.6 srt/entrypoints/engine.py:116 (and :496),
    # 0.5.23 srt/entrypoints/engine.py:311 (and :1185)
    start_anchors: tuple[bytes, ...] = (b"server_args=",)
    # the default rows, then every other dtype a pool is sized for (cell.py ELEM_BYTES)
    kv_dtypes = DEFAULT_DTYPES + tuple(d for d in ELEM_BYTES if d not in DEFAULT_DTYPES)

    def parse_line(self, text: str) -> Event | None:
        return grammar.parse_line(text)

    def identifies(self, ev: Event) -> bool:
        # An out-of-memory error reads the same from any engine (the CUDA allocator's text).
        return ev.kind != "oom"

    def owns_frame(self, frame: Frame) -> bool:
        return sglang_frames.owns_frame(frame)

    def hints(self, ev: Event, text: str) -> Iterable[str]:
        return grammar.hints(ev, text)

    def version_range(self, run: Run, known: str | None = None) -> VersionRange:
        return version.infer_version(run, known=known)

    def kv_dtype_advice(self, dtype: str, run: Run,
                        checkpoint: CheckpointFacts | None = None, *,
                        release: str | None = None) -> str:
        """The flag that gives a `dtype` KV cache on the SGLang versions this log (or the host,
        or the user's pin) implies, with the advice that goes with it."""
        known = release or (checkpoint.engine_version(self.name) if checkpoint else None)
        algo = checkpoint.kv_cache_quant_algo if checkpoint is not None else None
        vr = version.infer_version(run, known=known)
        flag, advice = version.kv_dtype_flag(
            dtype, vr, checkpoint_kv_fp8=(str(algo).upper() == "FP8") if algo else None)
        spelling = kv_dtype_spelling(dtype, fromrun.model_class(run), vr.hi)
        if flag is not None and spelling is not None:
            flag = f"--kv-cache-dtype {spelling}"
        return f"{flag}; {advice.rstrip('.')}" if flag else advice.rstrip(".")

    def calculator(self, run: Run, model: ModelSpec | str | None = None,
                   checkpoint: CheckpointFacts | None = None, *,
                   release: str | None = None, tp: int | None = None,
                   attn_dp: int | None = None, page_size: int | None = None,
                   context_len: int | None = None) -> Calculator | None:
        return fromrun.calculator_from_run(run, model, checkpoint, sglang_version=release, tp=tp,
                                           attn_dp=attn_dp, page_size=page_size,
                                           context_len=context_len)

    def check_release(self, text: str) -> str:
        return fmt(version.check_release(text))

    def plan(self, spec: ModelSpec | None, spec_reason: str, *, current_dtype: str,
             tokens: int | None, context_len: int | None, tp: int, attn_dp: int,
             page_size: int | None, pool_gib: float | None,
             release: str | None) -> Calculator:
        return plan.plan(spec, spec_reason, current_dtype=current_dtype, tokens=tokens,
                         context_len=context_len, tp=tp, attn_dp=attn_dp, page_size=page_size,
                         pool_gib=pool_gib, release=release)

    def fp8_scales_inline(self, run: Run,
                          checkpoint: CheckpointFacts | None = None) -> str | None:
        return scales.fp8_scales_inline(run, checkpoint)

    def transfer_failure(self, text: str) -> tuple[str, str] | None:
        return disagg.transfer_failure(text)

    def tag_floors(self, run: Run) -> Mapping[str, tuple[int, str]]:
        return ranks.tag_floors(run)

    def running_limit(self, run: Run, checkpoint: CheckpointFacts | None = None, *,
                      release: str | None = None) -> RunningLimit | None:
        # SGLang's capacity line prints its cap under its own name (max_running_requests=).
        return None

    def metrics_endpoint(self, server_args: Mapping[str, object]) -> tuple[int | None, str]:
        """The HTTP `--port` (0.5.23 arg_groups/fields/serving.py:66, default 30000), which
        serves /metrics only with `--enable-metrics` (arg_groups/fields/observability.py:70,
        default False; entrypoints/http_server.py:314-317). The dump prints both in every
        release read (the repr and the dict form): an absent one is a cut paste, not a
        default, so only a printed `enable_metrics=False` says /metrics is not served."""
        if server_args.get("enable_metrics") is False:
            return None, ("the server was started without --enable-metrics (its server_args "
                          "say enable_metrics=False): SGLang serves no /metrics then")
        if _logged_port(server_args) is not None:
            return self.http_port(server_args), "the server's --port in the log"
        return self.http_port(server_args), "SGLang's default port 30000 (--metrics-port to " \
            "change it)"

    def http_port(self, server_args: Mapping[str, object]) -> int:
        """--port, default 30000 (0.5.23 arg_groups/fields/serving.py:66)."""
        return _logged_port(server_args) or 30000


def _logged_port(server_args: Mapping[str, object]) -> int | None:
    port = server_args.get("port")
    return port if isinstance(port, int) and not isinstance(port, bool) else None


ENGINE: Engine = SGLang()
