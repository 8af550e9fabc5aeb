"""The parallel layout of a deployment, one figure everywhere (header, facts, what-if).

Why a function of its own: the layout is stated by the args dump when there is one, and otherwise
only implied by the rank tags (`[... DP1 TP3]`), which a pasted excerpt shows only some of. A tag
TPn proves TP >= n+1, never that TP equals the number of tags seen; DP tags give the DP width;
DP-attention shows as DP groups whose TP indices do not repeat (each rank is tagged with its DP
index and its global TP index), while plain DP replicas each restart at TP0. A tag rankN (vLLM
0.7-0.10.0's workers, numbered over TP and PP together) proves TP x PP >= n+1 and neither alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kvtui.core.report_types import ParallelFacts
    from kvtui.core.state import Run


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def _pow2_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def _tag_index(rank: str, prefix: str) -> int | None:
    for tok in rank.split():
        if tok.startswith(prefix) and tok[len(prefix):].isdigit():
            return int(tok[len(prefix):])
    return None


# The basis of a degree the engine infers from tags its lines lack (`Engine.tag_floors` maps
# it to (1, why): SGLang 0.4.7+ tags TP only when tp_size > 1).
INFERRED = "inferred from untagged lines"


def proven(ranks: Any, prefix: str) -> int | None:
    """The least size a degree can have given the rank tags seen: tag `TP5` proves TP >= 6
    (None: no tag of that kind)."""
    seen = [i for r in ranks if (i := _tag_index(r, prefix)) is not None]
    return max(seen) + 1 if seen else None


def degree_label(name: str, value: int | None, basis: str | None, ranks: Any,
                 floors: Mapping[str, int] | None = None) -> str:
    """A degree as a reader should see it: `TP=8` when stated, `TP>=6` when only rank tags
    imply it (the tags of a pasted excerpt prove a lower bound, not the size), `TP=?` when
    unknown. `name`: TP, DP, PP or EP, also the prefix of its rank tags; `floors`: the least
    sizes the engine's tags prove beyond their index (`Layout.least`)."""
    if value is None:
        return f"{name}=?"
    if basis == INFERRED:
        return f"{name}={value} (inferred)"
    if basis == "rank tags":
        least = proven(ranks, name)
        floor = (floors or {}).get(name)
        if least is not None and floor is not None:
            least = max(least, floor)
        return f"{name}>={least if least is not None else value}"
    return f"{name}={value}"


def sized_label(name: str, value: int | None, basis: str | None, ranks: Any, *,
                assumed: int = 1) -> str:
    """A degree as a what-if uses it, in the words of `degree_label`: `TP=8` when stated,
    `TP>=6 (sized as 8)` when only rank tags imply it (the header's `TP>=6`, and the size the
    arithmetic took: `layout` sizes TP from its tags as the next power of two), `TP=? (assumed
    1)` when unknown."""
    label = degree_label(name, value, basis, ranks)
    if value is None:
        return f"{label} (assumed {assumed})"
    if basis == "rank tags":
        return f"{label} (sized as {value})"
    return label


def rank_span(ranks: list[str]) -> str:
    """Ranks named compactly and without a gap hidden: "TP0..TP7", "TP0,TP2", "TP0..TP2,TP4".

    Runs of consecutive numbers under one prefix collapse to "first..last"; anything else is
    listed. A span that reads as a range always is one (TP0 and TP2 are never "TP0..TP2")."""
    parts: list[str] = []
    run: list[tuple[str, int]] = []

    def close() -> None:
        if run:
            (pre, a), (_, b) = run[0], run[-1]
            parts.append(f"{pre}{a}" if a == b else f"{pre}{a}..{pre}{b}")
            run.clear()

    for r in ranks:
        head = r.rstrip("0123456789")
        tail = r[len(head):]
        if not tail:
            close()
            parts.append(r)
            continue
        n = int(tail)
        if run and (run[-1][0] != head or run[-1][1] + 1 != n):
            close()
        run.append((head, n))
    close()
    return ",".join(parts)


def world_label(least: int) -> str:
    """What worker tags that count TP and PP together prove: `TPxPP>=4` (vLLM 0.7-0.10.0's
    `VllmWorker rank=3`, tagged `rank3`)."""
    return f"TPxPP>={least}"


def parallel_label(par: ParallelFacts, name: str) -> str:
    """`degree_label` of the report's degree `name` (tp, dp, pp or ep; `world` for the TP x PP
    product only rank tags of both at once imply: `world_label`)."""
    if name == "world":
        return world_label(par.world) if par.world is not None else "TPxPP=?"
    return degree_label(name.upper(), par.degree(name), (par.basis or {}).get(name),
                        par.ranks_seen, par.least)


@dataclass(frozen=True, slots=True)
class Layout:
    """TP / DP / PP / EP sizes and attention DP; `basis` says where each came from."""

    tp: int | None = None
    dp: int | None = None
    pp: int | None = None
    ep: int | None = None
    attn_dp: int | None = None
    enable_dp_attention: Any = None
    # The least TP x PP that `rankN` tags prove (a worker numbered over TP and PP together),
    # when the log states neither size: TP and PP each stay unknown.
    world: int | None = None
    # The world size the engine printed (vLLM's rank-assignment lines: `rank 3 in world size
    # 8 ...`, `Run.world_sizes`), when its lines name one world only: exact, unlike `world`.
    world_size: int | None = None
    basis: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # The least sizes the rank tags prove beyond their index, where the engine tags a degree
    # only when it exceeds 1 (`Engine.tag_floors`: SGLang's `TP0` proves TP >= 2).
    least: dict[str, int] = field(default_factory=dict)

    @property
    def attn_tp(self) -> int | None:
        if self.tp is None:
            return None
        return max(1, self.tp // (self.attn_dp or 1))


def _attn_dp_of_tags(groups: dict[int, set[int]], tp: int | None) -> int | None:
    """Attention DP from the DP groups seen (DP index -> the TP indices tagged with it), or None
    when the tags do not read as DP attention.

    Under DP attention SGLang tags a rank `DP{tp_rank // attn_tp_size} TP{tp_rank}` (0.5.8
    layers/dp_attention.py:231-233, managers/data_parallel_controller.py:427) and asserts
    tp_size % dp_size == 0 (server_args.py:1936). So the groups are disjoint and in order (each
    group's TP indices above the previous group's), and the highest DP tag proves attention DP
    >= index + 1: an excerpt shows only some ranks, so the groups seen are not the count. With TP
    known, the size is the least divisor of TP at or above that bound under which every tag
    reads as `tp_rank // attn_tp_size`. Plain DP replicas each restart at TP0 (overlapping
    groups): not DP attention. One group seen proves nothing either way."""
    if len(groups) < 2:
        return None
    order = sorted(groups)
    if any(max(groups[a]) >= min(groups[b]) for a, b in pairwise(order)):
        return None
    if any(t < d for d, ts in groups.items() for t in ts):  # tp_rank // attn_tp_size <= tp_rank
        return None
    least = order[-1] + 1
    if tp is not None:
        for size in range(least, tp + 1):
            if tp % size == 0 and all(t // (tp // size) == d
                                      for d, ts in groups.items() for t in ts):
                return size
    return least


def layout(run: Run, floors: Mapping[str, tuple[int, str]] | None = None) -> Layout:
    """The layout of one run: the dump's sizes, else what the rank tags prove (`floors`, the
    engine's `tag_floors`: a tag that proves more than its index)."""
    sa = run.server_args or {}
    basis: dict[str, str] = {}
    notes: list[str] = []
    ranks: set[str] = set(run.ranks or ())
    least: dict[str, int] = {}

    def bound(name: str) -> int | None:
        seen = proven(ranks, name)
        floor = (floors or {}).get(name)
        if seen is not None and floor is not None and floor[0] > seen:
            least[name] = floor[0]
            return floor[0]
        return seen

    tp, dp = _int(sa.get("tp_size")), _int(sa.get("dp_size"))
    pp, ep = _int(sa.get("pp_size")), _int(sa.get("ep_size"))
    for name, value in (("tp", tp), ("dp", dp), ("pp", pp), ("ep", ep)):
        if value is not None:
            basis[name] = "server_args"
    # vLLM's rank-assignment lines prove sizes exactly (`Run.placed_sizes`): they fill what the
    # dump left unsaid, and say so in the basis (an argument the operator gave still wins).
    placed = run.placed_sizes
    tp = tp or _placed(placed, "tp", basis)
    dp = dp or _placed(placed, "dp", basis)
    pp = pp or _placed(placed, "pp", basis)
    top = proven(ranks, "TP")
    if tp is None and top is None and floors and floors.get("TP", (0, ""))[0] == 1:
        # the engine tags TP only when it exceeds 1, and its tagging lines have none
        tp = 1
        basis["tp"] = INFERRED
        notes.append(f"tp_size not in the log: {floors['TP'][1]}, so TP = 1 (inferred); pass "
                     "--tp to override")
    seen = bound("TP") if tp is None else top
    if tp is None and seen is not None and top is not None:
        tp = _pow2_at_least(seen)
        basis["tp"] = "rank tags"
        why = f" ({floors['TP'][1]})" if floors and "TP" in least else ""
        notes.append(f"tp_size not in the log: rank tag TP{top - 1} proves TP >= {seen}{why}"
                     + (f", taken as {tp} (the next power of two)" if tp != seen else "")
                     + "; pass --tp to override")
    dp_tags = proven(ranks, "DP")
    if dp is None and dp_tags is not None:
        dp = dp_tags
        basis["dp"] = "rank tags"
    attn_dp = _int(sa.get("attn_dp_size"))
    if attn_dp is not None:
        basis["attn_dp"] = "server_args"
    elif sa.get("enable_dp_attention") in (True, "True", "true") and _int(sa.get("dp_size")):
        attn_dp = _int(sa.get("dp_size"))
        basis["attn_dp"] = "server_args (dp_size with enable_dp_attention)"
    elif "enable_dp_attention" not in sa and dp_tags:
        groups: dict[int, set[int]] = {}
        for r in ranks:
            d, t = _tag_index(r, "DP"), _tag_index(r, "TP")
            if d is not None and t is not None:
                groups.setdefault(d, set()).add(t)
        attn_dp = _attn_dp_of_tags(groups, tp)
        if attn_dp is not None:
            basis["attn_dp"] = "rank tags"
            notes.append(f"DP-attention inferred from the rank tags: attention DP {attn_dp}"
                         + (f", attention TP {max(1, tp // attn_dp)}" if tp else ""))
    if pp is None and (pp := bound("PP")) is not None:
        basis["pp"] = "rank tags"
    if ep is None and (ep := bound("EP")) is not None:
        basis["ep"] = "rank tags"
    # vLLM 0.7-0.10.0 number their workers over TP x PP (`VllmWorker rank=N`, tagged rankN)
    world = proven(ranks, "rank")
    if world is not None and tp is not None:
        if pp is None and world > tp:
            pp = -(-world // tp)  # TP stated: the rest of the product is PP
            basis["pp"] = "rank tags"
            notes.append(f"pipeline_parallel_size not in the log: rank tag rank{world - 1} "
                         f"proves TP x PP >= {world}, so PP >= {pp} at TP {tp}")
        world = None
    elif world is not None:
        basis["world"] = "rank tags"
        notes.append(f"tensor_parallel_size not in the log: rank tag rank{world - 1} counts TP "
                     f"and PP together ({world_label(world)}); TP unknown")
    worlds = run.world_sizes
    world_size = (next(iter(worlds)) if len(worlds) == 1 and not run.places_conflict
                  else None)
    return Layout(tp=tp, dp=dp, pp=pp, ep=ep, attn_dp=attn_dp,
                  enable_dp_attention=sa.get("enable_dp_attention"), world=world,
                  world_size=_int(world_size), basis=basis, notes=tuple(notes), least=least)


def _placed(placed: dict[str, int], name: str, basis: dict[str, str]) -> int | None:
    """The size of group `name` the rank-assignment lines prove (`Run.placed_sizes`, keyed by
    the line's `<name>_rank` field), noted in `basis`."""
    size = _int(placed.get(f"{name}_rank"))
    if size is not None:
        basis[name] = "rank assignment"
    return size
