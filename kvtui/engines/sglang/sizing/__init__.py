"""SGLang's own pool-sizing rules, release by release.

Why a package of its own: kvtui's promise is that its numbers are SGLang's numbers, and SGLang
changed how it sizes the KV pool many times (the Mamba split, the radix-cache slot ratio, which
models get a sliding-window pool, the FP4 and DSA cell layouts, draft layers). Every such rule is
here, keyed by release, with the release and file:line it was read from. The calculator that
applies them sits beside this package (`kvtui.engines.sglang`: `cell`, `calculator`,
`scenario`, `inverse`, `calibrate`, `fromrun`), behind the engine seam; the engine-neutral pieces
they use (ModelSpec, presets, Parallel, the what-if frame) are the core's (`kvtui.core.capacity`),
and vLLM's equivalent is `kvtui.engines.vllm.sizing`.

Modules:
- `args`: the server arguments that drive sizing, with each release's defaults.
- `families`: which architectures a release supports and how (GDN / Mamba2 / KDA hybrids,
  hybrid SWA, MLA, DSA), and the KV dtypes a model or release refuses.
- `mamba`: the per-request state, the rest-memory split, the slots-per-request cap.
- `swa`: the hybrid sliding-window pool decision and token split.
- `cells`: FP4 / MXFP8 / DSA / draft-layer parts of the cell and what the pool line prints.
- `budget`: one allocation as SGLang would make it from a rest-memory figure.

Nothing is imported here on purpose: `kvtui.engines.sglang.cell` uses these modules and
`budget` uses the cell, so importing them from the package root would be circular.
"""
