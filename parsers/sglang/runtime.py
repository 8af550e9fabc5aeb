"""Runtime scheduler lines: "Prefill batch", "Decode batch" and retraction.

These are ~all of a long log, so the decode path has one precompiled pattern for the layouts
that dominate real logs (plain pool, with or without the graph flag) and falls back to a
`key: value` pair walk only for the rest (hybrid pools, spec decoding, PD, cut pastes). The
pair walk is table-driven: unknown keys are ignored rather than turned into fields, so a
mangled paste can never invent a field name.
"""

from __future__ import annotations

from typing import Any

import regex

from parsers.catalogue import Format, Variant
from parsers.sglang.fields import convert, finite
from parsers.sglang.releases import P, between, since, until

# Field name, converter code: i=int, f=float, p=percent float, b=bool.
_Spec = tuple[str, str]

_GRAPH_KEYS = ("cuda graph", "npu graph", "cpu graph", "musa graph", "xpu graph", "hpu graph")

_COMMON: dict[str, _Spec] = {
    "#running-req": ("running_req", "i"),
    "#queue-req": ("queue_req", "i"),
    "token usage": ("token_usage", "f"),
    "full token usage": ("full_token_usage", "f"),
    "swa token usage": ("swa_token_usage", "f"),
    "mamba usage": ("mamba_usage", "f"),
    "#token": ("token", "i"),
    **{k: ("cuda_graph", "b") for k in _GRAPH_KEYS},
}

DECODE_KEYS: dict[str, _Spec] = {
    **_COMMON,
    "#full token": ("full_token", "i"),
    "#swa token": ("swa_token", "i"),
    "mamba num": ("mamba_num", "i"),
    "gen throughput (token/s)": ("gen_throughput", "f"),
    "accept len": ("accept_len", "f"),
    "accept rate": ("accept_rate", "f"),
    "#retracted-req": ("retracted_req", "i"),
    "pre-allocated usage": ("preallocated_usage", "f"),
    "#prealloc-req": ("prealloc_req", "i"),
    "#transfer-req": ("transfer_req", "i"),
    "#host-receive-req": ("host_receive_req", "i"),
    "largest-len": ("largest_len", "i"),
    "waiting-image-req": ("waiting_image_req", "i"),
    "#cache_miss": ("cache_miss", "i"),
    "#gpu token": ("gpu_token", "i"),
    "gpu token usage": ("gpu_token_usage", "f"),
    "#cpu token": ("cpu_token", "i"),
    "cpu token usage": ("cpu_token_usage", "f"),
    "est. decode TFLOPS/s (per GPU)": ("decode_tflops", "f"),
    # The only "GB" SGLang prints in 1e9 bytes; the name keeps the unit honest.
    "est. read BW (GB/s per GPU)": ("read_bw_gbps", "f"),
    "est. write BW (GB/s per GPU)": ("write_bw_gbps", "f"),
}

PREFILL_KEYS: dict[str, _Spec] = {
    **_COMMON,
    "#new-seq": ("new_seq", "i"),
    "#new-token": ("new_token", "i"),
    "#cached-token": ("cached_token", "i"),
    "cache hit rate": ("cache_hit_rate", "p"),
    "input throughput (token/s)": ("input_throughput", "f"),
    "#pending-token": ("pending_token", "i"),
    "#replay-token": ("replay_token", "i"),
    "#unbootstrapped-req": ("unbootstrapped_req", "i"),
    "#transferring-req": ("transferring_req", "i"),
    "#bootstrap-req": ("bootstrap_req", "i"),
    "#inflight-req": ("inflight_req", "i"),
    "#prealloc-req": ("prealloc_req", "i"),
    "#optimistic-req": ("optimistic_req", "i"),
    "waiting-image-req": ("waiting_image_req", "i"),
    "est. prefill TFLOPS/s (per GPU)": ("prefill_tflops", "f"),
}

# 0.4.9 hybrid SWA prints `#token: full=X, swa=Y, token usage: full=U, swa=V`.
_SPLIT_KEYS: dict[str, tuple[str, str, str]] = {
    "#token": ("full_token", "swa_token", "i"),
    "token usage": ("full_token_usage", "swa_token_usage", "f"),
}

# Keys that close a line in some version: a value after them was printed whole even when the
# line has no trailing ", " (otherwise the last value of a cut paste is not trusted).
_TERMINAL_KEYS = frozenset(
    {"#queue-req", "input throughput (token/s)", "#cache_miss", "#transferring-req",
     "est. prefill TFLOPS/s (per GPU)", "est. write BW (GB/s per GPU)", *_GRAPH_KEYS}
)

DECODE_BASE: tuple[str, ...] = (
    "running_req", "token", "full_token", "swa_token", "token_usage", "full_token_usage",
    "swa_token_usage", "mamba_usage", "gen_throughput", "queue_req", "cuda_graph",
    "accept_len", "retracted_req",
)
PREFILL_BASE: tuple[str, ...] = (
    "new_seq", "new_token", "cached_token", "token_usage", "full_token_usage",
    "swa_token_usage", "mamba_usage", "running_req", "queue_req", "cache_hit_rate",
    "input_throughput", "cuda_graph",
)


# A number SGLang prints in these lines, whole: every float column is `:.2f` (a percent `:.2f%`:
# 0.5.23 managers/scheduler_components/metrics_reporter.py:783-1055, pool_stats_observer.py
# :108-141; 0.1.14 managers/router/model_rpc.py:229), every count a plain int. A line that ends
# right after such a number was cut after it, not inside it (a paste trimmed to a column, a
# tool that prints the first columns only); "0.0" or "6.7" at the end was cut inside its value.
_WHOLE = {"i": regex.compile(r"-?\d+"), "f": regex.compile(r"-?\d+\.\d\d"),
          "p": regex.compile(r"-?\d+\.\d\d%"), "b": regex.compile(r"True|False")}


def _whole(code: str, raw: str) -> bool:
    """Is `raw`, the last value of a line, a number printed whole (`_WHOLE`)?"""
    pattern = _WHOLE.get(code)
    return pattern is not None and pattern.fullmatch(raw.strip()) is not None


def fill_pairs(rest: str, table: dict[str, _Spec], fields: dict[str, Any]) -> None:
    """Walk `key: value, ` pairs into `fields` through `table`."""
    parts = rest.split(", ")
    last = len(parts) - 1
    complete = rest.endswith((",", " "))
    split_key: str | None = None
    for i, part in enumerate(parts):
        key, sep, raw = part.partition(": ")
        if not sep:
            # 0.4.9's `swa=Y` continuation of the previous split key.
            if split_key is not None and part.startswith("swa="):
                if i == last and not complete:
                    continue
                _full, swa_name, code = _SPLIT_KEYS[split_key]
                fields[swa_name] = convert(code, part[4:])
            split_key = None
            continue
        split_key = None
        if i == last and not complete and key not in _TERMINAL_KEYS and not (
                key in table and _whole(table[key][1], raw)):
            continue  # the paste stopped inside this value
        if raw.startswith("full=") and key in _SPLIT_KEYS:
            full_name, _swa, code = _SPLIT_KEYS[key]
            fields[full_name] = convert(code, raw[5:])
            split_key = key
            continue
        spec = table.get(key)
        if spec is not None:
            value = convert(spec[1], raw)
            if value is not None:
                fields[spec[0]] = value


_DECODE_HEAD = regex.compile(r"(?:\[gpu=\d+\] )?Decode batch(?: \[\d+\])?[.,] ?")


_GRAPH_FLAGS: dict[str, bool] = {
    f"{name}: {flag}": flag == "True" for name in _GRAPH_KEYS for flag in ("True", "False")
}


# Exact-text lookups for the columns whose printed values repeat (usage is `:.2f` in [0, 1],
# request counts are small): a dict hit is cheaper than int()/float() on the hot path.
_USAGE: dict[str, float] = {f"{n / 100:.2f}": n / 100 for n in range(101)}
_SMALL: dict[str, int] = {str(n): n for n in range(4097)}


def decode_split(text: str, start: int) -> dict[str, Any] | None:
    """The fields of `decode_split_variant`, for callers that need no dating."""
    hit = decode_split_variant(text, start)
    return None if hit is None else hit[0]


def decode_split_variant(text: str, start: int) -> tuple[dict[str, Any], str] | None:
    """`_decode_split`, with a value a paste cut in half sending the line to the general path."""
    try:
        return _decode_split(text, start)
    except ValueError:
        return None


def _decode_split(text: str, start: int) -> tuple[dict[str, Any], str] | None:
    """The dominant decode layouts, by splitting instead of a regex.

    `text[start:]` is the message. Covers the plain pool (`#token`, `token usage`), the Mamba
    hybrid (`#full token`, `full token usage`, `mamba num`, `mamba usage`) and the SWA hybrid
    (`#full token`, ..., `#swa token`, `swa token usage`) layouts, each with optional
    `accept len`/`accept rate` and graph columns: together nearly every line of a real log.
    Measured several times faster than the pair walk because `regex` matching of the
    literal-heavy line costs more than a C-level split plus a few prefix compares. Any deviation
    returns None and the caller takes the general path, so this can only be faster, never
    different (tests compare the two on every layout).
    """
    p = text.split(", ")
    head = p[0][start:]
    if head == "Decode batch":
        r = p[1] if len(p) > 1 else ""
        if r[:14] != "#running-req: ":
            return None
        running = r[14:]
        i = 2
        comma = True
    elif head[:28] == "Decode batch. #running-req: ":
        running = head[28:]
        i = 1
        comma = False
    else:
        return None
    n = len(p)
    if n < i + 4:
        return None
    tok = p[i]
    use = p[i + 1]
    full_token = swa_token = mamba_num = None
    full_use = swa_use = mamba_use = None
    token = usage = None
    if tok[:8] == "#token: ":
        if use[:13] != "token usage: ":
            return None
        token = int(tok[8:])
        use = use[13:]
        usage = _USAGE.get(use)
        if usage is None:
            usage = finite(float(use))
        i += 2
    elif tok[:13] == "#full token: ":
        if use[:18] != "full token usage: " or n < i + 6:
            return None
        full_token = int(tok[13:])
        use = use[18:]
        full_use = _USAGE.get(use)
        if full_use is None:
            full_use = finite(float(use))
        third, fourth = p[i + 2], p[i + 3]
        if third[:11] == "mamba num: " and fourth[:13] == "mamba usage: ":
            mamba_num = int(third[11:])
            v = fourth[13:]
            mamba_use = _USAGE.get(v)
            if mamba_use is None:
                mamba_use = finite(float(v))
            i += 4
        elif third[:12] == "#swa token: " and fourth[:17] == "swa token usage: ":
            swa_token = int(third[12:])
            v = fourth[17:]
            swa_use = _USAGE.get(v)
            if swa_use is None:
                swa_use = finite(float(v))
            i += 4
        else:
            return None
    else:
        return None
    accept_len = accept_rate = None
    col = p[i] if i < n else ""
    if col[:12] == "accept len: ":
        accept_len = float(col[12:])
        i += 1
        col = p[i] if i < n else ""
        if col[:13] == "accept rate: ":
            accept_rate = float(col[13:])
            i += 1
    if n < i + 2:
        return None
    graph = _GRAPH_FLAGS.get(p[i])
    if graph is not None:
        i += 1
        if n < i + 2:
            return None
    gen = p[i]
    queue = p[i + 1]
    if gen[:26] != "gen throughput (token/s): " or queue[:12] != "#queue-req: ":
        return None
    # The closing ", " of 0.4.4-0.4.5, 0.4.10-0.5.8 leaves "" (or "\n") after the last split;
    # a paste that trimmed its space leaves "#queue-req: 0," instead.
    trailing = n > i + 2 or "," in queue
    if n > i + 2 and (n > i + 3 or p[i + 2].strip()):
        return None  # more columns than this layout has (a trailing ", " leaves "" or "\n")
    queue = queue[12:].rstrip(", \n")
    running_value = _SMALL.get(running)
    queue_value = _SMALL.get(queue)
    fields = {
        "running_req": int(running) if running_value is None else running_value,
        "token": token, "full_token": full_token, "swa_token": swa_token,
        "token_usage": usage, "full_token_usage": full_use, "swa_token_usage": swa_use,
        "mamba_usage": mamba_use, "gen_throughput": finite(float(gen[26:])),
        "queue_req": int(queue) if queue_value is None else queue_value,
        "cuda_graph": graph, "accept_len": accept_len, "retracted_req": None,
    }
    if mamba_num is not None:
        fields["mamba_num"] = mamba_num
    if accept_rate is not None:
        fields["accept_rate"] = accept_rate
    if comma:
        return fields, "decode_batch:v0.5.4" if trailing else "decode_batch:v0.5.9"
    if graph is None:
        return fields, "decode_batch:v0.4.4" if trailing else "decode_batch:v0.2"
    return fields, "decode_batch:v0.4.10" if trailing else "decode_batch:v0.4.7"


def parse_decode(msg: str) -> tuple[dict[str, Any], str | None] | None:
    """A decode line by its one grammar, the `key: value` pair walk (`fill_pairs` over
    `DECODE_KEYS`). The split (`_decode_split`) reads the dominant layouts first, only for speed:
    whatever it cannot read whole goes to the walk, and tests hold the two equal on every layout
    (tests/parsers/test_decode_fast_path.py). The column route's regex (`parsers.sglang.bulk`)
    is the third reading, also for speed (one C `findall` per block), held equal to `parse_line` by
    tests/parsers/test_bulk_rows.py."""
    fast = decode_split_variant(msg, 0)
    if fast is not None:
        return fast
    h = _DECODE_HEAD.match(msg)
    if h is None:
        return None
    fields = dict.fromkeys(DECODE_BASE)
    rest = msg[h.end() :]
    fill_pairs(rest, DECODE_KEYS, fields)
    return fields, _decode_variant(msg[h.start() :], rest, fields)


def _decode_variant(msg: str, rest: str, fields: dict[str, Any]) -> str | None:
    """The release range a decode line's layout shows (sglang-log-lines.md 7.2).

    `Decode batch.` (<= 0.5.3) or `Decode batch,` / `Decode batch [N],` (0.5.4+); a graph
    column (0.4.7+) sits just before `gen throughput`; a trailing ", " closes the line in
    0.4.4-0.4.5, 0.4.10-0.5.3 and 0.5.4-0.5.8. A line without its closing `#queue-req` is cut,
    so only what it shows dates it.
    """
    comma = not msg.lstrip("[gpu=0123456789] ").startswith("Decode batch.")
    complete = fields.get("queue_req") is not None
    trailing = rest.rstrip("\n ").endswith(",")
    graph = fields.get("cuda_graph") is not None
    if comma:
        if not complete:
            return "decode_batch:comma"
        return "decode_batch:v0.5.4" if trailing else "decode_batch:v0.5.9"
    if graph:
        if not complete:
            return "decode_batch:period_graph"
        return "decode_batch:v0.4.10" if trailing else "decode_batch:v0.4.7"
    if fields.get("gen_throughput") is None and "gen throughput" not in rest:
        return "decode_batch:period"  # cut before the graph column could show
    if not complete:
        return "decode_batch:no_graph"
    return "decode_batch:v0.4.4" if trailing else "decode_batch:v0.2"


def parse_bare_decode(msg: str) -> tuple[dict[str, Any], str | None] | None:
    """Pre-0.2 decode stats printed without the "Decode batch" head: `#running-req: N, #token:
    N, token usage: F, #queue-req: N` (0.1.14 managers/router/model_rpc.py:226-231, under
    `format="%(message)s"`, :62-65), with `gen throughput (token/s): F, ` before the queue from
    0.1.16 (:245-249). The running count must be followed by the token columns: the same
    file's "Cache not flushed ... #running-req: N" warning is no batch."""
    if not msg.startswith("#running-req: ") or ", #token: " not in msg[:40] \
            or "token usage: " not in msg:
        return None
    fields: dict[str, Any] = dict.fromkeys(DECODE_BASE)
    fill_pairs(msg, DECODE_KEYS, fields)
    if fields.get("token_usage") is None:
        return None
    return fields, ("decode_batch:bare" if "gen throughput" in msg
                    else "decode_batch:bare_no_gen")


_PREFILL_HEAD = regex.compile(
    r"Prefill batch(?:\(mixed #running-req: (\d+)\))?(?: \[\d+\])?[.,] ?"
)


# Dominant prefill layouts: 0.3.x-0.4.x (cache hit rate optional) and 0.5.9-0.5.23 plain pool
# (graph flag before or after the throughput, #pending-token optional).
_PREFILL_FAST = regex.compile(
    r"Prefill batch[.,] #new-seq: (\d+), #new-token: (\d+), #cached-token: (\d+), "
    r"(?:cache hit rate: (\d+\.\d+)%, )?(?:token usage: (\d+\.\d+)|full token usage: "
    r"(\d+\.\d+), (?:mamba usage: (\d+\.\d+)|swa token usage: (\d+\.\d+))), #running-req: (\d+), "
    r"#queue-req: (\d+)(?:, #pending-token: (\d+))?"
    r"(?:, (?:cuda|npu|cpu|musa) graph: (True|False))?"
    r"(?:, input throughput \(token/s\): (\d+\.\d+))?"
    r"(?:, (?:cuda|npu|cpu|musa) graph: (True|False))?(?:, ?)?$"
)


def parse_prefill(msg: str) -> tuple[dict[str, Any], str | None] | None:
    m = _PREFILL_FAST.match(msg)
    if m is not None:
        (seq, new, cached, hit, usage, full, mamba, swa, running, queue, pending, g1, tput,
         g2) = m.groups()
        graph = g1 if g1 is not None else g2
        fields: dict[str, Any] = {
            "new_seq": int(seq), "new_token": int(new), "cached_token": int(cached),
            "token_usage": None if usage is None else finite(float(usage)),
            "full_token_usage": None if full is None else finite(float(full)),
            "swa_token_usage": None if swa is None else finite(float(swa)),
            "mamba_usage": None if mamba is None else finite(float(mamba)),
            "running_req": int(running), "queue_req": int(queue),
            "cache_hit_rate": None if hit is None else finite(float(hit)),
            "input_throughput": None if tput is None else finite(float(tput)),
            "cuda_graph": None if graph is None else graph == "True",
        }
        if pending is not None:
            fields["pending_token"] = int(pending)
        # The layout, from what the pattern matched (as `_prefill_variant` reads it).
        if msg[13] == ".":
            variant = "prefill_batch:hit_rate" if hit is not None else "prefill_batch:v0.4.4"
        elif pending is not None:
            variant = "prefill_batch:v0.5.11"
        elif tput is not None:
            variant = ("prefill_batch:v0.5.10" if g1 is not None else "prefill_batch:v0.5.9"
                       if g2 is not None else "prefill_batch:throughput")
        else:
            variant = ("prefill_batch:v0.5.4" if msg.rstrip("\n ").endswith(",")
                       else "prefill_batch:comma")
        return fields, variant
    return _parse_prefill_pairs(msg)


def _parse_prefill_pairs(msg: str) -> tuple[dict[str, Any], str | None] | None:
    h = _PREFILL_HEAD.match(msg)
    if h is None:
        return None
    fields = dict.fromkeys(PREFILL_BASE)
    rest = msg[h.end() :]
    fill_pairs(rest, PREFILL_KEYS, fields)
    mixed = h.group(1)
    if mixed is not None:
        fields["mixed_running_req"] = int(mixed)
        if fields["running_req"] is None:
            fields["running_req"] = int(mixed)
    return fields, _prefill_variant(msg, rest, fields, mixed is not None)


def _prefill_variant(msg: str, rest: str, fields: dict[str, Any], mixed: bool) -> str | None:
    """The release range a prefill line's layout shows (sglang-log-lines.md 7.1).

    `Prefill batch.` with `cache hit rate` (<= 0.4.3) or without it (0.4.4-0.5.3; the rate
    stood before the usage column); `Prefill batch,` (0.5.4+) with `input throughput` (0.5.9+),
    the graph flag after it (0.5.9) or before it (0.5.10+), `#pending-token` (0.5.11+) and
    `#replay-token` (0.5.21+).
    """
    if mixed:
        return "prefill_batch:mixed"
    if msg.startswith("Prefill batch."):
        if fields.get("cache_hit_rate") is not None:
            return "prefill_batch:hit_rate"
        if fields.get("token_usage") is not None or fields.get("full_token_usage") is not None:
            return "prefill_batch:v0.4.4"
        return "prefill_batch:period"
    if fields.get("replay_token") is not None:
        return "prefill_batch:v0.5.21"
    if fields.get("pending_token") is not None:
        return "prefill_batch:v0.5.11"
    if fields.get("input_throughput") is not None:
        if fields.get("cuda_graph") is None:
            return "prefill_batch:throughput"
        graph_first = rest.find(" graph: ") < rest.find("input throughput")
        return "prefill_batch:v0.5.10" if graph_first else "prefill_batch:v0.5.9"
    if fields.get("queue_req") is not None and rest.rstrip("\n ").endswith(","):
        return "prefill_batch:v0.5.4"
    return "prefill_batch:comma"


# 0.1.x/0.2.x `new fill batch. #seq: 1. #cached_token: 0. #new_token: 8. ...` (dot-separated).
_FILL_PAIR = regex.compile(r"(#?\w+): (-?\d+(?:\.\d+)?)(%?)")
_FILL_KEYS: dict[str, _Spec] = {
    "#seq": ("new_seq", "i"),
    "#new_token": ("new_token", "i"),
    "#cached_token": ("cached_token", "i"),
    "#remaining_req": ("queue_req", "i"),
    "#running_req": ("running_req", "i"),
    "tree_cache_hit_rate": ("cache_hit_rate", "p"),
}


def parse_fill_batch(msg: str) -> tuple[dict[str, Any], str | None] | None:
    at = msg.find("new fill batch.")
    if at < 0 or at > 12:
        return None
    fields: dict[str, Any] = dict.fromkeys(PREFILL_BASE)
    for m in _FILL_PAIR.finditer(msg, at + 15):
        spec = _FILL_KEYS.get(m.group(1))
        if spec is not None and fields[spec[0]] is None:
            fields[spec[0]] = convert(spec[1], m.group(2))
    return fields, "prefill_batch:fill"


_RETRACT = regex.compile(
    r"#retracted_reqs: (\d+)"
    r"(?:, #aborted_retracted_reqs: (\d+))?"
    r"(?:, #new_tokens_gained: (\d+))?"
    r"(?:, #mamba_num_gained: (\d+))?"
    r"(?:, #new_token_ratio: (\d+(?:\.\d+)?) -> (\d+(?:\.\d+)?))?"
)
_RETRACT_HEADS: tuple[tuple[str, str], ...] = (
    ("Decode out of memory happened", "decode_oom"),
    ("KV cache pool is full. Retract requests", "pool_full"),
    ("Testing retraction", "test"),
)


def parse_retraction(msg: str) -> tuple[dict[str, Any], str | None] | None:
    wording = next((w for head, w in _RETRACT_HEADS if msg.startswith(head)), None)
    if wording is None:
        return None
    fields: dict[str, Any] = {
        "retracted_reqs": None, "new_token_ratio_before": None, "new_token_ratio_after": None,
        "wording": wording,
    }
    m = _RETRACT.search(msg)
    if m is not None:
        reqs, aborted, gained, mamba, before, after = m.groups()
        fields["retracted_reqs"] = int(reqs)
        if aborted is not None:
            fields["aborted_retracted_reqs"] = int(aborted)
        if gained is not None:
            fields["new_tokens_gained"] = int(gained)
        if mamba is not None:
            fields["mamba_num_gained"] = int(mamba)
        if before is not None and after is not None:
            fields["new_token_ratio_before"] = float(before)
            fields["new_token_ratio_after"] = float(after)
    return fields, _retraction_variant(wording, fields)


def _retraction_variant(wording: str, fields: dict[str, Any]) -> str | None:
    """sglang-log-lines.md 7.3: the wording and the columns after `#retracted_reqs`."""
    if wording == "decode_oom":
        return "retraction:old"
    if wording == "test":
        return "retraction:test"
    if "mamba_num_gained" in fields:
        return "retraction:mamba"
    if "new_tokens_gained" in fields:
        return "retraction:gained"
    if "aborted_retracted_reqs" in fields:
        return "retraction:aborted"
    if fields["new_token_ratio_after"] is not None:
        # gained / aborted would stand between #retracted_reqs and the ratio: absent, not cut
        return "retraction:pool_full"
    return "retraction:pool_full_cut"


def parse_decode_any(msg: str) -> tuple[dict[str, Any], str | None] | None:
    """The decode format's parser: the headed line or the pre-0.2 bare one."""
    if msg[:1] == "#":
        return parse_bare_decode(msg)
    return parse_decode(msg)


def parse_prefill_any(msg: str) -> tuple[dict[str, Any], str | None] | None:
    """The prefill format's parser: `Prefill batch` or the 0.1.x `new fill batch`."""
    if msg[:1] == "P":
        return parse_prefill(msg)
    return parse_fill_batch(msg)


# --- the catalogue: the kinds this module parses, their layouts and releases ----------------------
FORMATS: tuple[Format, ...] = (
    Format("prefill_batch", ("Prefill batch", "new fill batch", "GPU: "),
           parse_prefill_any, (
        Variant("prefill_batch:fill", None,
                "new fill batch. #seq: .. #cached_token: .. #new_token: .. (0.1.x)",
                "sglang 0.1.x router/model_rpc.py (before the reference's oldest release)",
                "new fill batch. #seq: 7. #cached_token: 1541. #new_token: 4. "
                "#remaining_req: 0. #running_req: 0", ("new_seq", "cached_token")),
        Variant("prefill_batch:mixed", None,
                "Prefill batch(mixed #running-req: X). #new-seq: .. (mixed chunk)",
                "sglang-log-lines.md 7.1 (0.2.15-0.3.4 row)",
                P + "Prefill batch(mixed #running-req: 7). #new-seq: 1, #new-token: 10, "
                "#cached-token: 2, cache hit rate: 16.67%, token usage: 0.10, #queue-req: 3",
                ("new_seq", "running_req")),
        Variant("prefill_batch:hit_rate", until("0.4.3"),
                "Prefill batch. #new-seq: .., #new-token: .., #cached-token: .., cache hit "
                "rate: X.XX%, [token usage: .., ]#running-req: .., #queue-req: ..",
                "sglang-log-lines.md 7.1 (0.2.15-0.4.3 rows)",
                "[16:43:29 TP0] Prefill batch. #new-seq: 4, #new-token: 8192, #cached-token: "
                "291, cache hit rate: 2.76%, token usage: 0.04, #running-req: 1, #queue-req: 38",
                ("cache_hit_rate", "token_usage")),
        Variant("prefill_batch:v0.4.4", between("0.4.4", "0.5.3"),
                "Prefill batch. #new-seq: .., #new-token: .., #cached-token: .., token usage: "
                "X.XX, #running-req: .., #queue-req: ..[, ]",
                "0.4.6 managers/scheduler.py:993, 0.5.3 managers/scheduler_metrics_mixin.py:112",
                P + "Prefill batch. #new-seq: 2, #new-token: 2, #cached-token: 8027, "
                "token usage: 0.26, #running-req: 28, #queue-req: 0, ",
                ("new_seq", "token_usage", "queue_req")),
        Variant("prefill_batch:period", until("0.5.3"),
                "Prefill batch. #new-seq: .. (cut before the usage column)",
                "sglang-log-lines.md 7.1", P + "Prefill batch. #new-seq: 2, #new-token: 2, ",
                ("new_seq",), weak=True),
        Variant("prefill_batch:v0.5.4", between("0.5.4", "0.5.8"),
                "Prefill batch[ [N]], #new-seq: .., ..., #running-req: .., #queue-req: .., ",
                "0.5.4 managers/scheduler_metrics_mixin.py:126, 0.5.8 :208",
                P + "Prefill batch [12], #new-seq: 1, #new-token: 9, #cached-token: 0, "
                "full token usage: 0.10, mamba usage: 0.30, #running-req: 1, #queue-req: 0, ",
                ("mamba_usage", "full_token_usage", "queue_req")),
        Variant("prefill_batch:comma", since("0.5.4"),
                "Prefill batch, #new-seq: .. (cut)", "sglang-log-lines.md 7.1",
                P + "Prefill batch, #new-seq: 1, #new-token: 9, ", ("new_seq",)),
        Variant("prefill_batch:v0.5.9", between("0.5.9", "0.5.9"),
                "Prefill batch, ..., #queue-req: .., input throughput (token/s): .., "
                "cuda graph: B", "0.5.9 managers/scheduler_metrics_mixin.py:214",
                P + "Prefill batch, #new-seq: 1, #new-token: 2048, #cached-token: 0, "
                "token usage: 0.06, #running-req: 7, #queue-req: 0, input throughput "
                "(token/s): 9406.12, cuda graph: False", ("input_throughput", "cuda_graph")),
        Variant("prefill_batch:throughput", between("0.5.9", "0.5.10"),
                "Prefill batch, ..., #queue-req: .., input throughput (token/s): .. (no "
                "#pending-token, graph flag cut)", "sglang-log-lines.md 7.1",
                P + "Prefill batch, #new-seq: 1, #new-token: 2048, #cached-token: 0, "
                "token usage: 0.06, #running-req: 7, #queue-req: 0, input throughput "
                "(token/s): 9406.12", ("input_throughput",)),
        Variant("prefill_batch:v0.5.10", between("0.5.10", "0.5.10"),
                "Prefill batch, ..., #queue-req: .., cuda graph: B, input throughput "
                "(token/s): ..", "0.5.10 observability/scheduler_metrics_mixin.py:389",
                P + "Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, "
                "token usage: 0.10, #running-req: 3, #queue-req: 0, cuda graph: True, "
                "input throughput (token/s): 1200.50", ("input_throughput", "cuda_graph")),
        Variant("prefill_batch:v0.5.11", since("0.5.11"),
                "Prefill batch, ..., #queue-req: .., #pending-token: .., [...]graph: B, "
                "input throughput (token/s): ..",
                "0.5.11 observability/scheduler_metrics_mixin.py:365, 0.5.20 "
                "managers/scheduler_components/metrics_reporter.py:678",
                P + "Prefill batch, #new-seq: 1, #new-token: 896, #cached-token: 0, "
                "token usage: 0.31, #running-req: 45, #queue-req: 81, #pending-token: 70187, "
                "npu graph: False, input throughput (token/s): 12.50",
                ("pending_token", "cuda_graph", "input_throughput")),
        Variant("prefill_batch:v0.5.21", since("0.5.21"),
                "... #pending-token: .., #replay-token: .., ...",
                "sglang-log-lines.md 7.1 (0.5.21+ metrics_reporter.py)",
                P + "Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 0, token usage: "
                "0.31, #running-req: 4, #queue-req: 1, #pending-token: 7, #replay-token: 3, "
                "#bootstrap-req: 1, #inflight-req: 2, cuda graph: True, input throughput "
                "(token/s): 1.00, est. prefill TFLOPS/s (per GPU): 3.25",
                ("replay_token", "inflight_req", "prefill_tflops")),
    )),
    Format("decode_batch", ("Decode batch", "#running-req: "), parse_decode_any, (
        Variant("decode_batch:bare", None,
                "#running-req: .., #token: .., token usage: .., gen throughput (token/s): .., "
                "#queue-req: .. (0.1.x, no head)",
                "sglang 0.1.16 managers/router/model_rpc.py:245-249 (before the reference's "
                "oldest release)",
                "#running-req: 3, #token: 300, token usage: 0.01, gen throughput (token/s): "
                "50.00, #queue-req: 0", ("running_req", "token", "gen_throughput")),
        Variant("decode_batch:bare_no_gen", None,
                "#running-req: .., #token: .., token usage: .., #queue-req: .. (0.1.14, no "
                "head, no throughput)",
                "sglang 0.1.14 managers/router/model_rpc.py:226-231 (0.1.16 adds the "
                "throughput, :245-249)",
                "#running-req: 3, #token: 300, token usage: 0.01, #queue-req: 0",
                ("running_req", "token", "queue_req")),
        Variant("decode_batch:v0.2", until("0.4.6"),
                "Decode batch. #running-req: .., #token: .., token usage: .., gen throughput "
                "(token/s): .., #queue-req: .. (no graph, no trailing \", \")",
                "0.4.6 managers/scheduler.py:1044 (sglang-log-lines.md 7.2 0.2.15-0.4.3, "
                "0.4.6)", P + "Decode batch. #running-req: 8, #token: 62531, token usage: 0.12, "
                "gen throughput (token/s): 186.64, #queue-req: 0",
                ("running_req", "token", "token_usage", "gen_throughput", "queue_req"),
                weak=True),
        Variant("decode_batch:v0.4.4", between("0.4.4", "0.4.5"),
                "Decode batch. ... gen throughput (token/s): .., [largest-len: .., ]"
                "#queue-req: .., ", "sglang-log-lines.md 7.2 (0.4.4, 0.4.5 rows)",
                P + "Decode batch. #running-req: 509, #token: 180776, token usage: 0.43, "
                "gen throughput (token/s): 7897.87, largest-len: 0, #queue-req: 0, ",
                ("largest_len", "queue_req")),
        Variant("decode_batch:no_graph", until("0.4.6"),
                "Decode batch. ... gen throughput (token/s): .. (no graph column; cut)",
                "sglang-log-lines.md 7.2",
                P + "Decode batch. #running-req: 8, #token: 62531, token usage: 0.12, "
                "gen throughput (token/s): 186.64", ("running_req", "token_usage")),
        Variant("decode_batch:period", until("0.5.3"),
                "Decode batch. #running-req: .. (cut before the graph column)",
                "sglang-log-lines.md 7.2",
                P + "Decode batch. #running-req: 11, #token: 14082, token usage: 0.0",
                ("running_req", "token"), weak=True),
        Variant("decode_batch:v0.4.7", between("0.4.7", "0.4.9"),
                "Decode batch. ..., cuda graph: B, gen throughput (token/s): .., #queue-req: ..",
                "0.4.9 managers/scheduler.py:1361",
                P + "Decode batch. #running-req: 4, #token: 9071, token usage: 0.01, "
                "cuda graph: True, gen throughput (token/s): 12.00, #queue-req: 0",
                ("cuda_graph", "token"), weak=True),
        Variant("decode_batch:period_graph", between("0.4.7", "0.5.3"),
                "Decode batch. ..., cuda graph: B, ... (cut)", "sglang-log-lines.md 7.2",
                "2025-09-13 09:09:15 TP0] Decode batch. #running-req: 4, #token: 9071, "
                "token usage: 0.01, cuda graph: True, gen throughput (to",
                ("running_req", "cuda_graph")),
        Variant("decode_batch:v0.4.10", between("0.4.10", "0.5.3"),
                "Decode batch. #running-req: .., <usage>, ..., cuda graph: B, gen throughput "
                "(token/s): .., #queue-req: .., ",
                "0.4.10 managers/scheduler_metrics_mixin.py:170, 0.5.3 :215",
                P + "Decode batch. #running-req: 4, #full token: 100, full token usage: 0.10, "
                "#swa token: 50, swa token usage: 0.05, cuda graph: True, "
                "gen throughput (token/s): 12.00, #queue-req: 0, ",
                ("full_token", "swa_token", "swa_token_usage")),
        Variant("decode_batch:v0.5.4", between("0.5.4", "0.5.8"),
                "Decode batch[ [N]], #running-req: .., ..., #queue-req: .., ",
                "0.5.4 managers/scheduler_metrics_mixin.py:249, 0.5.8 :353",
                "[2025-11-11 04:06:30] Decode batch, #running-req: 28, #token: 22920, "
                "token usage: 0.13, cuda graph: True, gen throughput (token/s): 1086.59, "
                "#queue-req: 0, ", ("running_req", "cuda_graph", "queue_req")),
        Variant("decode_batch:comma", since("0.5.4"),
                "Decode batch, #running-req: .. (cut)", "sglang-log-lines.md 7.2",
                P + "Decode batch, #running-req: 11, #token: 14082, token usage: 0.0",
                ("running_req", "token")),
        Variant("decode_batch:v0.5.9", since("0.5.9"),
                "Decode batch, #running-req: .., ..., #queue-req: ..[, est. ...] (no trailing "
                "\", \")", "0.5.9 managers/scheduler_metrics_mixin.py:366, 0.5.23 "
                "managers/scheduler_components/metrics_reporter.py:963",
                P + "Decode batch, #running-req: 8, #full token: 52311, full token usage: 0.05, "
                "mamba num: 8, mamba usage: 0.02, cuda graph: True, gen throughput (token/s): "
                "812.33, #queue-req: 0", ("full_token", "mamba_num", "mamba_usage"), weak=True),
    )),
    Format("retraction", ("Decode out of memory happened", "KV cache pool is full",
                          "Testing retraction"), parse_retraction, (
        Variant("retraction:old", until("0.4.6"),
                "Decode out of memory happened. #retracted_reqs: .., #new_token_ratio: a -> b",
                "0.4.6 managers/scheduler.py:1336",
                P + "Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: "
                "0.8024 -> 0.9085", ("retracted_reqs", "new_token_ratio_after")),
        Variant("retraction:pool_full", between("0.4.7", "0.5.6"),
                "KV cache pool is full. Retract requests. #retracted_reqs: .., "
                "#new_token_ratio: a -> b", "0.4.9 managers/scheduler.py:1688",
                P + "KV cache pool is full. Retract requests. #retracted_reqs: 2, "
                "#new_token_ratio: 0.4000 -> 0.7000", ("retracted_reqs", "new_token_ratio_after")),
        Variant("retraction:pool_full_cut", since("0.4.7"),
                "KV cache pool is full. Retract requests. (cut)", "sglang-log-lines.md 7.3",
                P + "KV cache pool is full. Retract requests. #retracted_reqs: 2",
                ("retracted_reqs",)),
        Variant("retraction:aborted", between("0.5.3", "0.5.4"),
                "... #retracted_reqs: .., #aborted_retracted_reqs: .., #new_token_ratio: ..",
                "0.5.3 managers/scheduler.py:2018, 0.5.4 :1858",
                P + "KV cache pool is full. Retract requests. #retracted_reqs: 2, "
                "#aborted_retracted_reqs: 1, #new_token_ratio: 0.4000 -> 0.7000",
                ("aborted_retracted_reqs",)),
        Variant("retraction:gained", since("0.5.7"),
                "... #retracted_reqs: .., #new_tokens_gained: ..[, #new_token_ratio: ..]",
                "0.5.7 managers/scheduler.py:2131, 0.5.23 :4530",
                P + "KV cache pool is full. Retract requests. #retracted_reqs: 3, "
                "#new_tokens_gained: 5120, #new_token_ratio: 0.4135 -> 0.7000",
                ("new_tokens_gained",)),
        Variant("retraction:mamba", since("0.5.11"),
                "... #new_tokens_gained: .., #mamba_num_gained: .., ...",
                "0.5.11 managers/scheduler.py:2867, 0.5.23 :4532",
                P + "KV cache pool is full. Retract requests. #retracted_reqs: 3, "
                "#new_tokens_gained: 5120, #mamba_num_gained: 2, #new_token_ratio: 0.4135 -> "
                "0.7000", ("mamba_num_gained",)),
        Variant("retraction:test", since("0.5.7"),
                "Testing retraction. #retracted_reqs: .., #new_tokens_gained: ..",
                "0.5.7 managers/scheduler.py:2129, 0.5.23 :4528",
                P + "Testing retraction. #retracted_reqs: 3, #new_tokens_gained: 12",
                ("retracted_reqs",)),
    )),
)
