"""kvtui: live analysis of SGLang and vLLM server logs for KV-cache precision and capacity."""

__version__ = "0.1.0"
