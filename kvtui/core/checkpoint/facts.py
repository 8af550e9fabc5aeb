"""The checkpoint's facts as plain typed dataclasses: what alerts, report and UI read.

Kept free of reading logic so the lead's typed report can hold them as they are. `to_dict` gives
JSON-safe values (non-finite floats become the strings "nan", "inf", "-inf") and leaves out the
time the reading took, so the same checkpoint always gives the same report.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

# Verdict words, worst first; `primary` of a verdict is the first that applies.
VERDICTS = ("broken", "unloadable", "partial", "incomplete", "trivial", "uniform", "calibrated",
            "absent", "unknown")


@dataclass(frozen=True)
class ScaleTensor:
    """One KV-scale tensor of the checkpoint, with its value(s) when they could be read."""

    name: str
    file: str  # the safetensors file that holds it (as the index names it)
    kind: str  # "k" | "v" | "kv" (one scale shared by K and V)
    stack: str  # "model.layers", "" when the name has no layer index
    layer: int | None
    dtype: str | None = None  # safetensors dtype (F32, BF16, F16, ...)
    shape: tuple[int, ...] | None = None
    values: tuple[float, ...] | None = None  # None: not read (see `problem`)
    problem: str | None = None


@dataclass(frozen=True)
class Finding:
    """One reason behind a verdict, with the tensors (or files) that show it."""

    code: str  # a VERDICTS word, or "config-mismatch"
    message: str
    evidence: tuple[str, ...] = ()


@dataclass
class KVScaleVerdict:
    """What one engine would make of the checkpoint's KV scales."""

    engine: str  # an engine's name (`Engine.name`)
    verdict: str  # a VERDICTS word
    findings: list[Finding] = field(default_factory=list)
    loaded_tensors: int = 0  # tensors the engine loads (by name and config)
    scaled_layers: int = 0  # attention layers with a usable K and V scale
    expected_layers: int = 0  # attention layers that have a KV cache
    k_range: tuple[float, float] | None = None  # min/max of the loaded K scales
    v_range: tuple[float, float] | None = None
    confidence: str = "high"  # high | medium (the engine's loader for this model unverified)

    @property
    def config_mismatch(self) -> bool:
        return any(f.code == "config-mismatch" for f in self.findings)

    @property
    def usable(self) -> bool:
        """The engine quantizes with real, per-layer scales from the checkpoint."""
        return self.verdict in ("calibrated", "uniform")

    def summary(self) -> str:
        """One sentence: the verdict and its first reason."""
        ranges = []
        for kind, r in (("k", self.k_range), ("v", self.v_range)):
            if r is not None:
                ranges.append(f"{kind}_scale {_fmt(r[0])}..{_fmt(r[1])}")
        span = f" ({', '.join(ranges)})" if ranges and self.verdict != "trivial" else ""
        first = self.findings[0].message if self.findings else ""
        layers = (f"; {self.scaled_layers}/{self.expected_layers} attention layers scaled"
                  if self.expected_layers else "")
        head = ("no KV-scale tensors in the checkpoint" if self.verdict == "absent"
                else f"KV scales {self.verdict}{span}{layers}")
        return f"{head}: {first}" if first else head


@dataclass
class KVScaleFacts:
    """The KV-scale tensors read from the checkpoint's headers and data, and the cost of it."""

    tensors: list[ScaleTensor] = field(default_factory=list)
    attention_layers: dict[str, list[int]] = field(default_factory=dict)  # stack -> indices
    files_listed: int = 0  # safetensors files of the checkpoint
    missing_files: list[str] = field(default_factory=list)  # listed by the index, absent
    unread_files: list[str] = field(default_factory=list)  # not read: limit reached or error
    bytes_read: int = 0  # everything read: JSON files, headers, scale data
    files_opened: int = 0
    seconds: float = 0.0  # not in to_dict(): the report stays deterministic
    stopped: str | None = None  # why reading stopped early (time or size limit)
    verdicts: dict[str, KVScaleVerdict] = field(default_factory=dict)  # by engine


@dataclass
class CheckpointFacts:
    source: str | None = None  # where the files were read ("host:/dir" or "/dir")
    model_path: str | None = None  # as given in server_args (or on the command line)
    has_config: bool = False
    quant_method: str | None = None  # weight quantization (fp8, modelopt, compressed-tensors...)
    kv_cache_quant_algo: str | None = None  # e.g. "FP8" from hf_quant_config.json
    kv_cache_scheme: dict[str, Any] | None = None  # compressed-tensors' KV declaration
    kv_declarations: list[str] = field(default_factory=list)  # "file: key=value", each source
    has_k_scale: bool | None = None  # None: no tensor list could be read
    has_v_scale: bool | None = None
    scale_tensor_count: int = 0
    # The engines installed where the checkpoint was read, by engine name ({"sglang": "0.5.9"}):
    # an engine pins its release with it (`engine_version`).
    engine_versions: dict[str, str] = field(default_factory=dict)
    model_config: dict[str, Any] = field(default_factory=dict)
    kv_scales: KVScaleFacts | None = None  # None: tensors not read (no safetensors found)
    notes: list[str] = field(default_factory=list)

    @property
    def architecture(self) -> str | None:
        archs = self.model_config.get("architectures")
        return archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) \
            else None

    def kv_scale_verdict(self, engine: str | None = None) -> KVScaleVerdict | None:
        """The engine's verdict on the KV scales (None: the first engine's, `first_name`), None
        when the tensors were not read."""
        if engine is None:
            from kvtui.core.engine_names import first_name

            engine = first_name()
        return self.kv_scales.verdicts.get(engine) if self.kv_scales is not None else None

    def engine_version(self, engine: str) -> str | None:
        """The release of `engine` installed where the checkpoint was read (None: not found)."""
        return self.engine_versions.get(engine)

    def to_dict(self) -> dict[str, Any]:
        from kvtui.core.engine_names import ENGINE_MODULES

        plain = _json_safe(asdict(self))
        # One `<engine>_version` key per engine, where the mapping sits (the JSON kept the keys
        # of the fields that came before it: tests/golden).
        d: dict[str, Any] = {}
        for key, value in plain.items():
            if key == "engine_versions":
                d.update({f"{name}_version": value.get(name) for name in ENGINE_MODULES})
            else:
                d[key] = value
        if d.get("kv_scales"):
            # the same checkpoint gives the same report: the time taken is for the limit only
            d["kv_scales"].pop("seconds", None)
        d["summary"] = self.summary()
        verdict = self.kv_scale_verdict()
        d["kv_scale_verdict"] = verdict.verdict if verdict is not None else None
        return d

    def summary(self) -> str:
        """One sentence for alerts and the TUI: what the checkpoint says about KV scales."""
        verdict = self.kv_scale_verdict()
        if verdict is not None and verdict.verdict != "absent":
            scales = verdict.summary()
        elif self.has_k_scale is None and self.has_v_scale is None:
            scales = "tensor list not readable"
        elif self.has_k_scale or self.has_v_scale:
            kinds = "/".join(n for n, v in (("k_scale", self.has_k_scale),
                                            ("v_scale", self.has_v_scale)) if v)
            scales = f"checkpoint carries per-layer {kinds} ({self.scale_tensor_count} tensors)"
        else:
            scales = "no k_scale/v_scale tensors anywhere in the checkpoint"
        algo = (f"; kv_cache_quant_algo={self.kv_cache_quant_algo}"
                if self.kv_cache_quant_algo else "")
        return scales + algo


def _fmt(v: float) -> str:
    return f"{v:.4g}" if math.isfinite(v) else str(v)


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj
