"""One stream's lines folded into a `State`: engine detection, the line route and the column route.

Why two routes: a live tail brings a few lines at a time and each needs its event (the log pane
colours it); a big file brings millions of decode lines in blocks, where one `regex` pass of the
engine's column grammar recognises the dominant layouts and the rows between two other events
are folded column-wise (`Runtime.of_columns`) and joined onto the run, at C speed. Both routes end
in the same state: the runtime fold is one definition (`kvtui.core.runtime`), and the tests hold
the routes together on every sample, the corpus and generated logs.

Engine detection: until a line proves which engine wrote the stream, every engine's grammar is
asked; the first that recognises a line it can identify wins for the rest of the stream.

Hand-wrapped lines: a paste may break a long line (the dump, a KV-cache line) after a ", ",
as often as it likes. A line that ends in a comma, followed by a line with no log head that
says nothing on its own, is read as one line with it when the two together read as the first
one's kind saying more, or saying as much inside a bracket the first one left open (a dump's
piece may hold only arguments kvtui does not read); the joined text may take the next piece in
turn (`joined`, one step of a wrap; `unwrap`, a block's wraps). The event is the first
physical line's, the other pieces yield none. Each step looks at the text so far and the next
line only, so a wrap reads the same however its lines arrive: every route reads lines through
here, and a wrap that reaches a block's end waits (`pending`, the text so far) for the next
block, or for `flush` at the end of the input.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Sequence
from itertools import compress, islice
from operator import gt, itemgetter, methodcaller, not_

from kvtui.core.engine import Engine
from kvtui.core.runtime import Columns
from kvtui.core.state import State
from parsers import BATCH_KINDS, Event
from parsers.frames import read_frame
from parsers.prefix import ends_in_comma, headless, unclosed

# Below this many lines a block, or STRETCH_MIN recognised rows between two other events, the
# line route is cheaper than setting up the columns.
BULK_MIN = 64
STRETCH_MIN = 16

# The quick tests of a wrap, at C speed over a block: a line that may be wrapped (every line
# `ends_in_comma` passes, with any blank after the comma) and a next line that has a log head
# (none that passes is `headless`); `Fold._step` and `Fold.open_ended` decide.
_MAY_WRAP = methodcaller("endswith", (",", " ", "\t", "\r"))
# The same test on a whole block at once: the set of its lines' last characters (`_unwrap`).
_WRAP_ENDS = frozenset((",", " ", "\t", "\r"))
_LAST_CHAR = itemgetter(slice(-1, None))
_HEADED = methodcaller("startswith", ("[", "("))

# A wrap's pieces and length at most: each step parses the text so far, so these bound what one
# line costs (the length is a source's bound of one line, kvtui/sources/lines.py).
WRAP_PIECES = 256
WRAP_CHARS = 65536

# Row columns of a ColumnGrammar.
HEAD, RUNNING, USAGE, GEN, QUEUE, TPUT, OTHER = range(7)


class Fold:
    """The facts of one stream (a file, a replay, a remote log) as its lines arrive."""

    def __init__(self, engines: Sequence[Engine], *, columns: bool = True) -> None:
        self.engines = tuple(engines)
        # Set by the first line that names the engine; until then every engine's grammar is
        # asked (even a single one: a report names an engine only when a line proved it).
        self.engine: Engine | None = None
        self.state = State()
        self.lines = 0
        self.use_columns = columns  # tests turn the column route off to compare
        # (source, line number, text, pieces): the last line fed, or the wrap that ends with it
        # read as one (its first line's number, the physical lines it took), held because it
        # ends in a comma and the next line may go on with it (`joined`); `flush` folds it.
        self.pending: tuple[str, int, str, int] | None = None
        self.first_text: str | None = None  # the first line fed (the chunk join asks it)

    # -- parsing ---------------------------------------------------------------------------
    def parse(self, text: str) -> Event | None:
        """The event of one line, detecting the engine on the way."""
        if self.engine is not None:
            ev = self.engine.parse_line(text)
            if ev is None and len(self.engines) > 1:
                ev = self._foreign(text)
            return ev
        first: Event | None = None
        for engine in self.engines:
            ev = engine.parse_line(text)
            if ev is None:
                continue
            if engine.identifies(ev):
                self._identified(engine)
                return ev
            first = first or ev
        if first is None:  # no event: a line of an engine's own that is none (a traceback frame)
            frame = read_frame(text)
            if frame is not None:
                for engine in self.engines:
                    if engine.owns_frame(frame):
                        self._identified(engine)
                        break
        return first

    def _foreign(self, text: str) -> Event | None:
        """A line the stream's engine does not read, read by another engine whose own wording
        it is (`identifies`): a paste that mixes engines ("vLLM vs SGLang capacity") keeps
        each line's fact. A line another grammar reads but cannot claim (an OOM's CUDA text)
        stays unread."""
        for engine in self.engines:
            if engine is self.engine:
                continue
            ev = engine.parse_line(text)
            if ev is not None and engine.identifies(ev):
                ev.foreign = True
                return ev
        return None

    def _identified(self, engine: Engine) -> None:
        self.engine = engine
        self.state.bind(engine)

    # -- hand-wrapped lines ----------------------------------------------------------------
    def joined(self, first: str, rest: str, pieces: int = 1) -> str | None:
        """`first` (a line, or a wrap of `pieces` lines read as one) and `rest` read as one
        line, or None when they are two (`_step`)."""
        step = self._step(first, rest, pieces)
        return step[0] if step is not None else None

    def _step(self, first: str, rest: str, pieces: int, alone: Event | None = None,
              known: bool = False) -> tuple[str, Event] | None:
        """One step of a wrap: (the text, its event) when `rest` goes on with `first`. So when
        `first` ends in a comma (and is no batch line, `open_ended`), `rest` has no log head
        and is no line of its own, and together they read as `first`'s kind with more fields,
        or with as many while `first` leaves a bracket open (a dump's piece of arguments the
        grammar does not read), or as a line where `first` alone read as none. `alone`:
        `first`'s event when the caller `known`s it (the step before made it)."""
        # the cheap tests first: SGLang 0.4 ends every decode line in ", " and the next one
        # has a head, so the parse in open_ended would run on every decode line
        if not headless(rest) or not ends_in_comma(first):
            return None
        if pieces >= WRAP_PIECES or len(first) + len(rest) >= WRAP_CHARS:
            return None
        ev = alone if known else self.parse(first)
        if ev is not None and ev.kind in BATCH_KINDS and not unclosed(first):
            return None  # not open-ended (`open_ended`)
        if self.parse(rest) is not None:
            return None
        text = first.rstrip(" \t") + " " + rest.lstrip(" \t")
        whole = self.parse(text)
        if whole is None:
            return None
        if ev is not None:
            said, more = _said(ev), _said(whole)
            if ev.kind != whole.kind or more < said or (more == said and not unclosed(first)):
                return None
        return text, whole

    def open_ended(self, text: str) -> bool:
        """May the next line be the rest of this one? It ends in a comma and is no batch line
        (SGLang's decode and prefill lines end in ", " in some releases, and a live view wants
        each one's event at once): the next line and `joined` decide."""
        if not ends_in_comma(text):
            return False
        ev = self.parse(text)
        return ev is None or ev.kind not in BATCH_KINDS or unclosed(text)

    def _may_go_on(self, text: str, pieces: int) -> bool:
        """Should a wrap of `pieces` lines read as `text` wait for the next line?"""
        return pieces < WRAP_PIECES and self.open_ended(text)

    def unwrap(self, lines: list[str]) -> list[str]:
        """`lines` with each hand-wrapped line (`joined`, step by step) made one: its first
        line's place holds the text, the other pieces' an empty line (so every line keeps its
        number)."""
        return self._unwrap(lines)[0]

    def _unwrap(self, lines: list[str]) -> tuple[list[str], tuple[int, str, int] | None]:
        """`unwrap`, and the block's last wrap (or last line) when it may go on in the next
        block: (its index, its text, its pieces)."""
        if _WRAP_ENDS.isdisjoint(map(_LAST_CHAR, lines)):
            # No line ends as a wrapped one does (`_MAY_WRAP`), the case of almost every
            # block: found in C, about 0.6 ms for 20,000 lines where the maps below take 4 ms.
            return lines, None
        out = None
        tail = None
        last = len(lines) - 1
        free = 0  # the first line no wrap took yet
        # lines that may be wrapped with a next line that may be their rest (`gt`: True, False)
        starts = map(gt, map(_MAY_WRAP, lines), map(_HEADED, islice(lines, 1, None)))
        for i in compress(range(last), starts):
            if i < free:
                continue
            text, pieces, ev = lines[i], 1, None
            while i + pieces <= last:
                step = self._step(text, lines[i + pieces], pieces, ev, pieces > 1)
                if step is None:
                    break
                text, ev = step
                pieces += 1
            free = i + pieces
            if pieces > 1:
                if out is None:
                    out = list(lines)
                out[i] = text
                out[i + 1:free] = [""] * (pieces - 1)
            if free > last and self._may_go_on(text, pieces):
                tail = (i, text, pieces)
        if free <= last and _MAY_WRAP(lines[last]) and self._may_go_on(lines[last], 1):
            tail = (last, lines[last], 1)  # the last line, alone: the next block may go on
        return (lines if out is None else out), tail

    def flush(self) -> Event | None:
        """The input ended: a held line or wrap (`pending`) is folded as it stands (its
        event is returned)."""
        held, self.pending = self.pending, None
        if held is None:
            return None
        source, n, text, _ = held
        ev = self.parse(text)
        if ev is not None:
            self.state.apply(ev, source, n, text)
        return ev

    def _resume(self, source: str, first_line_no: int) -> tuple[int, str, int] | None:
        """The held line or wrap, (its line number, text, pieces), when the lines fed now follow
        it (no longer held); else it is folded as it stands."""
        held = self.pending
        if held is None:
            return None
        if held[0] == source and held[1] + held[3] == first_line_no:
            self.pending = None
            return held[1:]
        self.flush()
        return None

    def _go_on(self, source: str, held: tuple[int, str, int],
               lines: list[str]) -> tuple[int, Event | None]:
        """Go on with a held wrap over the first of `lines` (the lines right after it): held
        again when it takes them all and may go on, else folded. Returns how many it took, and
        the wrap's event when it was folded."""
        n, text, pieces = held
        took = 0
        ev: Event | None = None
        while took < len(lines):
            step = self._step(text, lines[took], pieces, ev, took > 0)
            if step is None:
                break
            text, ev = step
            pieces += 1
            took += 1
        self.pending = (source, n, text, pieces)
        if took == len(lines) and self._may_go_on(text, pieces):
            return took, None
        return took, self.flush()

    # -- the line route --------------------------------------------------------------------
    def feed_line(self, source: str, line_no: int, text: str) -> Event | None:
        self.lines += 1
        sources = self.state.sources
        sources[source] = sources.get(source, 0) + 1
        if self.first_text is None:
            self.first_text = text
        held = self._resume(source, line_no)
        if held is not None:
            took, ev = self._go_on(source, held, [text])
            if took:
                return ev  # the wrap's, at its first line (None while it is held)
        if self.open_ended(text):
            self.pending = (source, line_no, text, 1)
            return None
        ev = self.parse(text)
        if ev is not None:
            self.state.apply(ev, source, line_no, text)
        return ev

    def feed_lines(self, source: str, lines: Iterable[str], first_line_no: int = 1) -> int:
        """Fold texts numbered from `first_line_no`; returns the next line number."""
        if not isinstance(lines, list):
            lines = list(lines)
        if not lines:
            return first_line_no
        if self.first_text is None:
            self.first_text = lines[0]
        end = first_line_no + len(lines)
        self._count(source, len(lines), first_line_no)
        held = self._resume(source, first_line_no)
        first = first_line_no
        if held is not None:
            took, _ = self._go_on(source, held, lines)
            if took:
                lines = lines[took:]
                first += took
        out, tail = self._unwrap(lines)
        if tail is not None:
            i, text, pieces = tail
            self.pending = (source, first + i, text, pieces)
            out = out[:i]
        self._fold_lines(source, out, first)
        return end

    def _fold_lines(self, source: str, lines: list[str], first_line_no: int) -> None:
        """Fold whole lines numbered from `first_line_no` (counted already)."""
        if not lines:
            return
        if self.engine is None:
            # Line by line until a line names the engine; the rest of the block may then take
            # the column route.
            apply = self.state.apply
            for i, text in enumerate(lines):
                ev = self.parse(text)
                if ev is not None:
                    apply(ev, source, first_line_no + i, text)
                if self.engine is not None:
                    self._fold_lines(source, lines[i + 1:], first_line_no + i + 1)
                    return
            return
        grammar = self.engine.columns
        if grammar is not None and self.use_columns and len(lines) >= BULK_MIN:
            # A block makes some 150,000 short-lived tuples and strings, none in a cycle:
            # letting the cycle collector walk them costs about 12% of the whole fold.
            collecting = gc.isenabled()
            gc.disable()
            try:
                rows = grammar.rows(lines)
                if rows is not None:
                    self._feed_rows(source, lines, rows, first_line_no)
                    return
            finally:
                if collecting:
                    gc.enable()
        apply = self.state.apply
        n = first_line_no
        for text in lines:
            ev = self.parse(text)
            if ev is not None:
                apply(ev, source, n, text)
            n += 1

    def _count(self, source: str, count: int, first: int) -> int:
        """Count `count` lines of `source` as read."""
        self.lines += count
        sources = self.state.sources
        sources[source] = sources.get(source, 0) + count
        return first + count

    # -- the column route ------------------------------------------------------------------
    def _feed_rows(self, source: str, lines: list[str], rows: Sequence[tuple[str, ...]],
                   first: int) -> None:
        """Fold a block whose dominant runtime lines the column grammar recognised.

        Every other line is parsed on its own; one that yields an event is applied in its place,
        and the recognised rows between two such lines are folded as one stretch.
        """
        assert self.engine is not None and self.engine.columns is not None
        head_facts = self.engine.columns.head_facts
        cols = list(zip(*rows, strict=True))
        heads = cols[HEAD]
        # Each distinct head (a second of one rank's log) is validated once; a row whose head is
        # no timestamp prefix goes back to the line route.
        facts = {h: head_facts(h) for h in set(heads) if h}
        if any(ts is None for ts, _ in facts.values()):
            cols[USAGE] = tuple(u if facts.get(h, (1,))[0] is not None else ""
                                for h, u in zip(heads, cols[USAGE], strict=True))
        apply = self.state.apply
        parse = self.engine.parse_line
        start = 0
        for i in compress(range(len(lines)), map(not_, cols[USAGE])):
            ev = parse(lines[i])
            if ev is not None:
                self._fold_stretch(source, lines, cols, facts, start, i, first)
                apply(ev, source, first + i, lines[i])
                start = i + 1
        self._fold_stretch(source, lines, cols, facts, start, len(lines), first)

    def _fold_stretch(self, source: str, lines: list[str], cols: list[tuple[str, ...]],
                      facts: dict[str, tuple[str | None, str | None]], a: int, b: int,
                      first: int) -> None:
        """The recognised rows of lines[a:b], where no other line is an event."""
        recognised = cols[USAGE][a:b]
        at = list(compress(range(a, b), recognised))
        if len(at) < STRETCH_MIN:
            self._apply_lines(source, lines, at, first)
            return
        gen = list(compress(cols[GEN][a:b], recognised))
        # The first row of a kind the run has not seen takes the line route: it records the
        # format hints and may open the run.
        seen = self.state.current.kinds_seen
        firsts = []
        if "decode_batch" not in seen:
            firsts.append(next(compress(range(len(at)), gen), None))
        if "prefill_batch" not in seen:
            firsts.append(next(compress(range(len(at)), map(not_, gen)), None))
        new = [j for j in firsts if j is not None]
        if new:
            k = at[min(new)]
            self._fold_stretch(source, lines, cols, facts, a, k, first)
            self._apply_lines(source, lines, [k], first)
            self._fold_stretch(source, lines, cols, facts, k + 1, b, first)
            return
        heads, running, usage, queue, tput = (list(compress(cols[c][a:b], recognised))
                                              for c in (HEAD, RUNNING, USAGE, QUEUE, TPUT))
        stretch = Columns(source=source, first_line=first, lines=lines, at=at, heads=heads,
                          facts=facts, usage=usage, running=running, queue=queue, gen=gen,
                          tput=tput)
        self._join_stretch(stretch)

    def _join_stretch(self, cols: Columns) -> None:
        """Count a stretch's rows as events of the current run and join their summary."""
        st = self.state
        run = st.current
        m = len(cols)
        n_decode = m - cols.gen.count("")
        st.events += m
        kinds = st.kinds
        if n_decode:
            kinds["decode_batch"] = kinds.get("decode_batch", 0) + n_decode
        if n_decode < m:
            kinds["prefill_batch"] = kinds.get("prefill_batch", 0) + m - n_decode
        run.lines_seen += m
        for h in set(cols.heads):
            rank = cols.facts[h][1]
            if rank:
                run.ranks.add(rank)
        run.runtime.add_columns(cols)

    def _apply_lines(self, source: str, lines: list[str], at: Iterable[int], first: int) -> None:
        apply = self.state.apply
        assert self.engine is not None
        parse = self.engine.parse_line
        for k in at:
            text = lines[k]
            ev = parse(text)
            if ev is not None:
                apply(ev, source, first + k, text)


def _said(ev: Event) -> int:
    """How many fields an event states."""
    return sum(v is not None for v in ev.fields.values())
