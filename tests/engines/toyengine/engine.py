"""ToyLM behind the seam: every member of `kvtui.core.engine.Engine`, written against the
protocols and the core's types only."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from kvtui.core.accuracy_terms import AccuracyTerms
from kvtui.core.capacity.modelspec import ModelSpec
from kvtui.core.checkpoint import CheckpointFacts
from kvtui.core.checkpoint.kvnames import QuantDecl, is_parameter
from kvtui.core.engine import ColumnGrammar, DiscoverySigns, Engine, KVScaleRules, Run
from kvtui.core.releases import ReleaseLine, VersionRange, fmt, parse_version
from kvtui.core.report_types import RunningLimit
from parsers import Event
from parsers.frames import Frame
from tests.engines.toyengine import grammar
from tests.engines.toyengine.flags import FLAGS, RELEASE_OPTION
from tests.engines.toyengine.sizing import BYTES_PER_TOKEN, ToyCalculator

TOY_LINE = ReleaseLine("toyengine", (1, 0, 0), (2, 1, 0), json_names_engine=True)


class ToyKVScales:
    """ToyLM loads a checkpoint's KV scales only under their parameters' own names."""

    def target(self, name: str, family: str | None) -> str | None:
        return name if is_parameter(name) else None

    def compressed_tensors_creates(self, scheme: Mapping[str, object] | None
                                   ) -> tuple[bool, str]:
        return False, "ToyLM reads no compressed-tensors KV scheme"

    def accepts_vector(self, decl: QuantDecl) -> bool:
        return False

    def remaps(self, architecture: str) -> bool:
        return True


class ToyLM:
    name = "toyengine"
    label = "ToyLM"
    package = "toylm"
    discovery = DiscoverySigns(process_patterns=("*toylm serve*",), image_patterns=("*toylm*",),
                               log_signs=("TOY/[12] ",))
    kv_scales: KVScaleRules = ToyKVScales()
    flags = FLAGS
    release_option = RELEASE_OPTION
    accuracy: AccuracyTerms | None = None
    wording: Mapping[str, str] = MappingProxyType({})
    terms: Mapping[str, str] = MappingProxyType({"max_total_num_tokens": "toy pool"})
    figure_formats: Mapping[str, str] = MappingProxyType({})
    scale_warning_after_load = False
    tag_shape_starts = False
    columns: ColumnGrammar | None = None
    retraction_groups: frozenset[str] | None = None
    start_markers: tuple[bytes, ...] = (b" start model=",)
    start_anchors: tuple[bytes, ...] = (b" start model=",)
    kv_dtypes: tuple[str, ...] = tuple(BYTES_PER_TOKEN)

    # -- grammar
    def parse_line(self, text: str) -> Event | None:
        return grammar.parse_line(text)

    def identifies(self, ev: Event) -> bool:
        return True  # no line of another program reads as ToyLM's

    def owns_frame(self, frame: Frame) -> bool:
        return False

    def hints(self, ev: Event, text: str) -> Iterable[str]:
        return (ev.variant,) if ev.variant else ()

    def transfer_failure(self, text: str) -> tuple[str, str] | None:
        return None  # ToyLM has no prefill/decode disaggregation

    def tag_floors(self, run: Run) -> Mapping[str, tuple[int, str]]:
        return {}

    # -- release dating: the TOY/2 head is 2.0+, TOY/1 is 1.x
    def version_range(self, run: Run, known: str | None = None) -> VersionRange:
        vr = TOY_LINE.any()
        pinned = parse_version(known or run.engine_version or "")
        if pinned is not None:
            return vr.narrow(pinned, pinned, f"ToyLM {fmt(pinned)}")
        if "head:2" in run.hints:
            vr = vr.narrow((2, 0, 0), None, "the TOY/2 head (2.0+)")
        if "head:1" in run.hints:
            vr = vr.narrow(None, (1, 9, 9), "the TOY/1 head (1.x)")
        return vr

    def check_release(self, text: str) -> str:
        v = parse_version(text)
        if v is None or not TOY_LINE.any().contains(v):
            raise ValueError(f"ToyLM {text}: kvtui knows 1.0.0 to 2.1.0")
        return fmt(v)

    def kv_dtype_advice(self, dtype: str, run: Run, checkpoint: CheckpointFacts | None = None,
                        *, release: str | None = None) -> str:
        return f"--toy-kv {dtype}"

    # -- sizing
    def calculator(self, run: Run, model: ModelSpec | str | None = None,
                   checkpoint: CheckpointFacts | None = None, *,
                   release: str | None = None, tp: int | None = None,
                   attn_dp: int | None = None, page_size: int | None = None,
                   context_len: int | None = None) -> ToyCalculator | None:
        cap = next(iter(run.capacity.values()), None)
        tokens = cap.get("max_total_num_tokens") if cap is not None else None
        if not isinstance(tokens, int):
            return None
        dtype = str(run.server_args.get("kv_cache_dtype") or "bf16")
        ctx = context_len or run.server_args.get("context_length")
        return ToyCalculator(tokens=tokens, dtype=dtype,
                             context_len=ctx if isinstance(ctx, int) else None,
                             version=self.version_range(run, release))

    def plan(self, spec: ModelSpec | None, spec_reason: str, *, current_dtype: str,
             tokens: int | None, context_len: int | None, tp: int, attn_dp: int,
             page_size: int | None, pool_gib: float | None,
             release: str | None) -> ToyCalculator:
        if tokens is None:
            raise ValueError("ToyLM plans from --tokens only")
        vr = TOY_LINE.any() if release is None else TOY_LINE.pinned(
            parse_version(release), "--toyengine-version")
        return ToyCalculator(tokens=tokens, dtype=current_dtype, context_len=context_len,
                             version=vr)

    def fp8_scales_inline(self, run: Run,
                          checkpoint: CheckpointFacts | None = None) -> str | None:
        return None

    def running_limit(self, run: Run, checkpoint: CheckpointFacts | None = None, *,
                      release: str | None = None) -> RunningLimit | None:
        return None

    def metrics_endpoint(self, server_args: Mapping[str, object]) -> tuple[int | None, str]:
        return None, "ToyLM serves no /metrics"

    def http_port(self, server_args: Mapping[str, object]) -> int | None:
        return None  # ToyLM is a library, no server


ENGINE: Engine = ToyLM()
