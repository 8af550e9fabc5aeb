"""One vocabulary for KV dtypes, whatever spelling the log used.

SGLang prints the same dtype as a CLI string (`fp8_e4m3`), a torch dtype (`torch.float8_e4m3fn`)
or a HIP variant (`float8_e4m3fnuz`). Alerts and the calculator compare dtypes, so everything is
folded to one canonical name first.
"""

from __future__ import annotations

CANONICAL = ("bf16", "fp16", "fp32", "fp8_e4m3", "fp8_e5m2", "mxfp8", "nvfp4", "fp4_mx_block16",
             "fp4_e2m1", "auto")

_ALIASES: dict[str, str] = {
    "auto": "auto",
    "bf16": "bf16", "bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16",
    "fp32": "fp32", "float32": "fp32", "float": "fp32",
    "fp8": "fp8_e4m3", "fp8_e4m3": "fp8_e4m3", "float8_e4m3fn": "fp8_e4m3",
    "float8_e4m3fnuz": "fp8_e4m3", "e4m3": "fp8_e4m3", "fp8_e4m3fn": "fp8_e4m3",
    "fp8_e5m2": "fp8_e5m2", "float8_e5m2": "fp8_e5m2", "float8_e5m2fnuz": "fp8_e5m2",
    "e5m2": "fp8_e5m2",
    "mxfp8": "mxfp8",
    "nvfp4": "nvfp4",
    "fp4_mx_block16": "fp4_mx_block16",
    "fp4_e2m1": "fp4_e2m1", "float4_e2m1fn_x2": "fp4_e2m1", "fp4": "fp4_e2m1",
}

FP8 = frozenset({"fp8_e4m3", "fp8_e5m2", "mxfp8"})
FP4 = frozenset({"nvfp4", "fp4_mx_block16", "fp4_e2m1"})


def normalize(raw: object) -> str | None:
    """Canonical KV dtype for any printed spelling; None when absent; the raw text when unknown."""
    if raw is None:
        return None
    text = str(raw).strip().strip("'\"").lower()
    if not text or text == "none":
        return None
    if text.startswith("torch."):
        text = text[len("torch."):]
    return _ALIASES.get(text, text)


def is_fp8(dtype: str | None) -> bool:
    return dtype in FP8


def is_fp4(dtype: str | None) -> bool:
    return dtype in FP4


def is_low_precision(dtype: str | None) -> bool:
    return dtype in FP8 or dtype in FP4
