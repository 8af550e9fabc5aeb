"""Reading a checkpoint through `CheckpointFiles`: configs, tensor names, KV-scale values.

The order keeps the cost bounded: the small JSON files first, then the safetensors index (every
tensor name and its shard), then only the shards that hold KV-scale tensors: their 8-byte length,
their JSON header, and the few bytes of each scale tensor (contiguous scales in one read).
Weights are never read. What could not be read becomes a note or an unread tensor, never an
exception, so a half-downloaded or odd checkpoint still gets a verdict about the part that is
there.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace

from kvtui.core.checkpoint import kvnames
from kvtui.core.checkpoint import safetensors as st
from kvtui.core.checkpoint.access import (
    CheckpointFiles,
    Ledger,
    LimitReached,
    RandomAccessFile,
    ReadBudget,
)
from kvtui.core.checkpoint.configs import (
    count_scale_tensors,
    parse_config_json,
    parse_hf_quant_config,
    parse_safetensors_index,
)
from kvtui.core.checkpoint.facts import CheckpointFacts, KVScaleFacts, ScaleTensor
from kvtui.core.checkpoint.verdict import judge

INDEX = "model.safetensors.index.json"


def read_checkpoint(files: CheckpointFiles, *, model_path: str | None = None,
                    budget: ReadBudget | None = None,
                    clock: Callable[[], float] = time.monotonic) -> CheckpointFacts:
    """Everything kvtui reads from a checkpoint directory, with the KV-scale verdicts."""
    facts = CheckpointFacts(model_path=model_path, source=files.label)
    ledger = Ledger(budget or ReadBudget(), clock)
    kv = KVScaleFacts()
    try:
        _read_configs(files, ledger, facts)
        _read_tensors(files, ledger, facts, kv)
    except LimitReached as exc:
        kv.stopped = str(exc)
        facts.notes.append(f"checkpoint reading {exc}")
    except OSError as exc:
        facts.notes.append(f"checkpoint reading failed: {exc}")
    kv.bytes_read, kv.files_opened = ledger.bytes, ledger.files_opened
    kv.seconds = round(ledger.seconds, 3)
    if kv.files_listed or kv.tensors or kv.stopped:
        facts.kv_scales = kv
        judge_all(facts)
    return facts


def judge_all(facts: CheckpointFacts) -> None:
    """(Re)compute every engine's verdict from the facts' tensors and config declarations."""
    from kvtui.core.engine_names import ENGINE_MODULES

    kv = facts.kv_scales
    if kv is None:
        return
    decl = kvnames.QuantDecl(kvnames.family_of(facts.quant_method), facts.kv_cache_quant_algo,
                             facts.kv_cache_scheme,
                             known=facts.has_config or facts.quant_method is not None)
    layers = facts.model_config.get("num_hidden_layers")
    kv.verdicts = {engine: judge(engine, kv, decl, architecture=facts.architecture,
                                 num_hidden_layers=layers if isinstance(layers, int) else None,
                                 declared=facts.kv_declarations)
                   for engine in ENGINE_MODULES}


def _read_text(files: CheckpointFiles, ledger: Ledger, name: str,
               facts: CheckpointFacts) -> str | None:
    f = ledger.open(files, name)
    if f is None:
        return None
    try:
        size = f.size()
        if size > ledger.budget.max_json_bytes:
            facts.notes.append(f"{name}: {size:,} bytes, too large to be read")
            return None
        return ledger.read(f, 0, size, name).decode("utf-8", "replace")
    finally:
        f.close()


def _read_configs(files: CheckpointFiles, ledger: Ledger, facts: CheckpointFacts) -> None:
    cfg = _read_text(files, ledger, "config.json", facts)
    if cfg is not None:
        parse_config_json(cfg, facts)
    else:
        facts.notes.append("config.json: missing")
    hq = _read_text(files, ledger, "hf_quant_config.json", facts)
    if hq is not None:
        parse_hf_quant_config(hq, facts)


def _read_tensors(files: CheckpointFiles, ledger: Ledger, facts: CheckpointFacts,
                  kv: KVScaleFacts) -> None:
    index = _read_text(files, ledger, INDEX, facts)
    weight_map = parse_safetensors_index(index, facts) if index is not None else None
    headers: dict[str, dict[str, st.TensorEntry]] = {}
    if weight_map is not None:
        shards = sorted(set(weight_map.values()))
        kv.files_listed = len(shards)
        try:
            for shard in shards:
                ledger.check(0, shard)
                if not files.exists(shard):
                    kv.missing_files.append(shard)
        except LimitReached:
            held = [(sn, weight_map[sn.name]) for sn in map(kvnames.scale_name, weight_map)
                    if sn is not None]
            kv.tensors = _unread(held, "not read: limit reached")
            kv.unread_files = sorted({shard for _, shard in held})
            raise
        if kv.missing_files:
            facts.notes.append(f"{len(kv.missing_files)} of {len(shards)} files listed in "
                               f"{INDEX} are missing: {', '.join(kv.missing_files[:5])}")
        names = list(weight_map)
    else:
        shards = sorted(n for n in files.list() if n.endswith(".safetensors"))
        kv.files_listed = len(shards)
        if not shards:
            facts.notes.append("no model.safetensors.index.json and no .safetensors files: "
                               "tensor names unknown (only safetensors checkpoints are read)")
            return
        weight_map = {}
        for shard in shards:  # no index: every header is needed for the names
            entries = _header_or_note(files, ledger, shard, facts, kv)
            if entries is not None:
                headers[shard] = entries
                weight_map.update(dict.fromkeys(entries, shard))
        names = list(weight_map)
        count_scale_tensors(names, facts)
    kv.attention_layers = _attention_layers(names)
    candidates = [(sn, weight_map[sn.name]) for sn in map(kvnames.scale_name, names)
                  if sn is not None]
    kv.tensors = _read_scale_values(files, ledger, facts, kv, candidates, headers)


def _unread(candidates: list[tuple[kvnames.ScaleName, str]], problem: str) -> list[ScaleTensor]:
    return _in_order([ScaleTensor(sn.name, shard, sn.kind, sn.stack, sn.layer, problem=problem)
                      for sn, shard in candidates])


def _attention_layers(names: list[str]) -> dict[str, list[int]]:
    layers: dict[str, set[int]] = defaultdict(set)
    for name in names:
        if kvnames.is_attention_tensor(name):
            where = kvnames.layer_of(name)
            if where is not None:
                layers[where[0]].add(where[1])
    return {stack: sorted(v) for stack, v in sorted(layers.items())}


def _header_or_note(files: CheckpointFiles, ledger: Ledger, shard: str,
                    facts: CheckpointFacts, kv: KVScaleFacts) -> dict[str, st.TensorEntry] | None:
    try:
        f = ledger.open(files, shard)
        if f is None:
            kv.missing_files.append(shard)
            return None
        try:
            return _header(f, ledger, shard)
        finally:
            f.close()
    except (OSError, st.FormatError) as exc:
        facts.notes.append(f"{shard}: {exc}")
        kv.unread_files.append(shard)
        return None


def _header(f: RandomAccessFile, ledger: Ledger, shard: str) -> dict[str, st.TensorEntry]:
    n = st.header_length(ledger.read(f, 0, 8, f"{shard} header length"))
    return st.parse_header(ledger.read(f, 8, n, f"{shard} header ({n:,} bytes)"), n)


def _read_scale_values(files: CheckpointFiles, ledger: Ledger, facts: CheckpointFacts,
                       kv: KVScaleFacts, candidates: list[tuple[kvnames.ScaleName, str]],
                       headers: dict[str, dict[str, st.TensorEntry]]) -> list[ScaleTensor]:
    by_shard: dict[str, list[ScaleTensor]] = defaultdict(list)
    for sn, shard in candidates:
        by_shard[shard].append(ScaleTensor(sn.name, shard, sn.kind, sn.stack, sn.layer))
    out: list[ScaleTensor] = []
    pending = sorted(by_shard)
    while pending:
        shard = pending.pop(0)
        tensors = by_shard[shard]
        if shard in kv.missing_files:
            out.extend(replace(t, problem=f"{shard} is missing") for t in tensors)
            continue
        try:
            out.extend(_read_shard(files, ledger, shard, tensors, headers.get(shard)))
        except LimitReached as exc:
            unread = [shard, *pending]
            kv.unread_files.extend(unread)
            out.extend(replace(t, problem="not read: limit reached")
                       for s in unread for t in by_shard[s])
            kv.tensors = _in_order(out)
            raise exc from None
        except (OSError, st.FormatError) as exc:
            facts.notes.append(f"{shard}: {exc}")
            kv.unread_files.append(shard)
            out.extend(replace(t, problem=f"{shard}: {exc}") for t in tensors)
    return _in_order(out)


def _in_order(tensors: list[ScaleTensor]) -> list[ScaleTensor]:
    return sorted(tensors, key=lambda t: (t.stack, -1 if t.layer is None else t.layer, t.name))


def _read_shard(files: CheckpointFiles, ledger: Ledger, shard: str, tensors: list[ScaleTensor],
                entries: dict[str, st.TensorEntry] | None) -> list[ScaleTensor]:
    f = ledger.open(files, shard)
    if f is None:
        raise OSError(f"{shard}: no such file")
    try:
        if entries is None:
            entries = _header(f, ledger, shard)
        planned: list[tuple[ScaleTensor, st.TensorEntry]] = []
        out: list[ScaleTensor] = []
        for t in tensors:
            e = entries.get(t.name)
            problem = _unreadable(e, ledger.budget)
            if e is None or problem:
                out.append(replace(t, problem=problem or "not in the file's header"))
                continue
            planned.append((replace(t, dtype=e.dtype, shape=e.shape), e))
        for group in _contiguous(planned):
            start, end = group[0][1].start, group[-1][1].end
            data = ledger.read(f, start, end - start, f"{len(group)} scale tensors of {shard}")
            for t, e in group:
                chunk = data[e.start - start:e.end - start]
                if len(chunk) != e.nbytes:
                    out.append(replace(t, problem="file ends before the tensor's data"))
                else:
                    out.append(replace(t, values=st.decode(e.dtype, chunk)))
        return out
    finally:
        f.close()


def _unreadable(e: st.TensorEntry | None, budget: ReadBudget) -> str | None:
    if e is None:
        return "not in the file's header"
    if e.dtype not in st.ITEM_SIZE:
        return f"dtype {e.dtype} is not read"
    if e.nbytes > budget.max_scale_bytes:
        return f"{e.nbytes:,} bytes (shape {list(e.shape)}): too large to be a KV scale"
    return None


def _contiguous(planned: list[tuple[ScaleTensor, st.TensorEntry]]
                ) -> list[list[tuple[ScaleTensor, st.TensorEntry]]]:
    """Scales whose bytes touch, as one read each: fewer round trips, not one byte of weight."""
    groups: list[list[tuple[ScaleTensor, st.TensorEntry]]] = []
    for item in sorted(planned, key=lambda p: p[1].start):
        if groups and groups[-1][-1][1].end == item[1].start:
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


# -- the Hugging Face hub cache layout (models--org--name/snapshots/<rev>/) -------------------

def hub_repo_dir(hub_id: str) -> str | None:
    """"org/name" -> "models--org--name" (the cache's folder for that repo), None if no id."""
    parts = hub_id.split("/")
    if len(parts) != 2 or not all(parts) or any(p in (".", "..") for p in parts):
        return None
    return "models--" + "--".join(parts)


def choose_snapshot(ref_main: str | None, snapshots: list[tuple[str, float]]) -> str | None:
    """The snapshot the hub library would load: refs/main's revision when it exists, else the
    newest snapshot directory (by mtime, then name, for a deterministic choice)."""
    names = {name for name, _ in snapshots}
    ref = (ref_main or "").strip()
    if ref and ref in names:
        return ref
    if not snapshots:
        return None
    return max(snapshots, key=lambda s: (s[1], s[0]))[0]
