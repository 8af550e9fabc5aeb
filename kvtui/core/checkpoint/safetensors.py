"""The safetensors file format, read from its header: tensor table and small tensor values.

A .safetensors file is an 8-byte little-endian header length N, N bytes of JSON (tensor name ->
dtype, shape, data_offsets relative to the end of the header; an optional "__metadata__" of
strings), then the data. So a scale tensor's value is one ranged read once the header is known,
and nothing else of the file (the weights) is ever touched. Pure: bytes in, values out.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass

# The reference implementation refuses larger headers (safetensors/src/tensor.rs MAX_HEADER_SIZE).
MAX_HEADER_BYTES = 100_000_000

ITEM_SIZE: dict[str, int] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "I16": 2, "U16": 2, "F16": 2,
    "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8,
}
_STRUCT: dict[str, str] = {"F64": "d", "F32": "f", "F16": "e", "I8": "b", "U8": "B", "I16": "h",
                           "U16": "H", "I32": "i", "U32": "I", "I64": "q", "U64": "Q"}


class FormatError(ValueError):
    """The bytes are not a safetensors header (or not one this reader accepts)."""


@dataclass(frozen=True)
class TensorEntry:
    """One row of a header: where a tensor's bytes are, as absolute file offsets."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    start: int  # absolute offset of the first data byte
    end: int  # absolute offset past the last data byte

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.end - self.start


def header_length(prefix: bytes) -> int:
    """N from the first 8 bytes; FormatError when absent, zero or beyond the format's limit."""
    if len(prefix) < 8:
        raise FormatError(f"file shorter than the 8-byte header length ({len(prefix)} bytes)")
    n: int = struct.unpack("<Q", prefix[:8])[0]
    if n == 0 or n > MAX_HEADER_BYTES:
        raise FormatError(f"header length {n:,} bytes is not plausible")
    return n


def parse_header(header: bytes, header_len: int | None = None) -> dict[str, TensorEntry]:
    """The tensor table of a header (the N bytes after the length), `__metadata__` left out.

    Entries whose dtype, shape or offsets are inconsistent are a FormatError: a value read from
    a wrong offset would be a wrong verdict, so a header we cannot trust is not used at all.
    """
    n = len(header) if header_len is None else header_len
    try:
        data = json.loads(header.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FormatError(f"header is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise FormatError("header is not a JSON object")
    base = 8 + n
    out: dict[str, TensorEntry] = {}
    for name, info in data.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise FormatError(f"{name}: entry is not an object")
        dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if not (isinstance(dtype, str) and isinstance(shape, list)
                and all(isinstance(d, int) and d >= 0 for d in shape)
                and isinstance(offsets, list) and len(offsets) == 2
                and all(isinstance(o, int) and o >= 0 for o in offsets)
                and offsets[0] <= offsets[1]):
            raise FormatError(f"{name}: malformed entry {info!r:.200}")
        size = ITEM_SIZE.get(dtype)
        if size is not None and math.prod(shape) * size != offsets[1] - offsets[0]:
            raise FormatError(f"{name}: {dtype}{shape} does not fill {offsets}")
        out[name] = TensorEntry(name, dtype, tuple(shape), base + offsets[0], base + offsets[1])
    return out


def _bf16(data: bytes) -> list[float]:
    """bfloat16 is the top half of a float32: widen each value and read it as one."""
    count = len(data) // 2
    halves = struct.unpack(f"<{count}H", data)
    return list(struct.unpack(f"<{count}f", struct.pack(f"<{count}I", *(h << 16 for h in halves))))


def _fp8(byte: int, mant_bits: int, bias: int, e4m3fn: bool) -> float:
    sign = -1.0 if byte & 0x80 else 1.0
    exp = (byte >> mant_bits) & ((1 << (7 - mant_bits)) - 1)
    mant = byte & ((1 << mant_bits) - 1)
    if e4m3fn and exp == 0xF and mant == 0x7:
        return math.nan  # E4M3FN: no infinities, one NaN pattern per sign
    if not e4m3fn and exp == 0x1F:
        return sign * math.inf if mant == 0 else math.nan
    if exp == 0:
        return sign * mant / (1 << mant_bits) * 2.0 ** (1 - bias)
    return sign * (1 + mant / (1 << mant_bits)) * 2.0 ** (exp - bias)


def decode(dtype: str, data: bytes) -> tuple[float, ...]:
    """The values of a tensor's bytes as floats (little-endian, as the format stores them)."""
    size = ITEM_SIZE.get(dtype)
    if size is None:
        raise FormatError(f"dtype {dtype} is not decoded")
    if len(data) % size:
        raise FormatError(f"{len(data)} bytes is not a whole number of {dtype} values")
    count = len(data) // size
    if dtype == "BF16":
        return tuple(_bf16(data))
    if dtype == "F8_E4M3":
        return tuple(_fp8(b, 3, 7, True) for b in data)
    if dtype == "F8_E5M2":
        return tuple(_fp8(b, 2, 15, False) for b in data)
    if dtype == "BOOL":
        return tuple(float(b != 0) for b in data)
    return tuple(float(v) for v in struct.unpack(f"<{count}{_STRUCT[dtype]}", data))
