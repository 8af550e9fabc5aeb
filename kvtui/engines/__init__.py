"""One package per LLM server engine, each behind the protocol of `kvtui.core.engine`.

An engine package holds everything that is true of one engine only: its line grammar (from
`parsers.<name>`), how its releases are dated, the flags its fixes name, and how it sizes its KV
pool. The core loads it by name (`kvtui.core.engine.ENGINE_MODULES`).
"""
