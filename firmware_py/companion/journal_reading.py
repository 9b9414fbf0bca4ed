"""Reading the journal folder back: every intact entry of both files, merged by seq.

The snapshot and the journal are read into one :class:`Reading` (the journal
streamed line by line: a journal of an older version holds thousands of
games), :func:`merge` finds the newest game state reachable without a gap, and
:func:`report` says what was skipped, where, and which turns were lost. Never
raises for bad content; an unreadable file is a problem in the report. The
files and their rules: :mod:`firmware_py.companion.journal`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .journal_format import claimed_seq, effective, lines_of, parse_line, parse_snapshot
from .journal_errors import reason_of


@dataclass
class Loaded:
    """What :meth:`Journal.load` found.

    ``entries``: the effective bodies of the game (setup first), ``seq``: the
    last seq, ``problems``: one line per finding for the log (file, line, byte),
    ``skipped``: damaged journal lines, ``lost``: e.g. "turns 16-20 lost;
    resumed at turn 15" ("" when nothing is known lost), ``notice``: a short
    text for the OLED ("" when all was well).
    """

    entries: list[dict] = field(default_factory=list)
    seq: int = 0
    problems: list[str] = field(default_factory=list)
    skipped: int = 0
    lost: str = ""
    notice: str = ""


def lost_text(kept: int, lost: int) -> str:
    """What the OLED and the log say when ``lost`` (>= 1) turns after turn ``kept`` (>= 0)
    could not be recovered, e.g. "turns 16-20 lost; resumed at turn 15"."""
    span = f"turn {kept + 1}" if lost == 1 else f"turns {kept + 1}-{kept + lost}"
    return f"{span} lost; resumed at turn {kept}"


class Reading:
    """The raw findings of one load: bodies by seq, snapshot base, damage, and the
    damaged files to quarantine (in the order found)."""

    def __init__(self) -> None:
        """An empty reading."""
        self.bodies: dict[int, dict] = {}
        self.copies: dict[int, dict] = {}
        self.snapshot: tuple[int, list[dict]] | None = None
        self.damaged: list[tuple[int, int, str]] = []     # (line, byte offset, why)
        self.floor = 0          # the seq of the last intact setup read: nothing before it is kept
        self.setups = 0         # intact setup entries read (games in the file)
        self.problems: list[str] = []
        self.max_seq = 0
        self.trailing = 0        # damaged lines after the last intact entry that held entries
        self.last_seq = 0        # the seq of that entry
        self.damaged_files: list[Path] = []

    def drop_before(self, seq: int) -> None:
        """An intact ``setup`` at ``seq``: no entry before it can be part of the game to
        resume (any base before it that reaches it ends where this setup's does, and
        effective() starts over at this setup; any other ends before it), so forget them."""
        self.floor = seq
        for held in (self.bodies, self.copies):
            for old in [s for s in held if s < seq]:
                del held[old]

    def take(self, parsed: tuple[int, dict, tuple[int, dict] | None]) -> None:
        """Keep one intact line's entry (and its copy of the entry before it)."""
        seq, body, prev = parsed
        if seq:
            if body.get("kind") == "setup" and seq not in self.bodies and seq > self.floor:
                self.setups += 1
                self.drop_before(seq)
            self.bodies.setdefault(seq, body)
            self.max_seq = max(self.max_seq, seq)
        if prev is not None and prev[0] >= self.floor:
            self.copies.setdefault(prev[0], prev[1])


def read_snapshot(path: Path, reading: Reading) -> None:
    """Read the snapshot at ``path`` into ``reading`` (a missing one is no problem)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as exc:
        reading.problems.append(f"{path}: cannot read ({reason_of(exc)})")
        return
    parsed = parse_snapshot(raw)
    if not isinstance(parsed, str):
        reading.snapshot = (parsed[0], effective(parsed[1]))
        reading.max_seq = max(reading.max_seq, parsed[0])
        return
    reading.problems.append(f"{path}: unusable ({parsed}, {len(raw)} bytes)")
    if raw:
        reading.damaged_files.append(path)
    claimed = claimed_seq(raw)
    if claimed:
        # a damaged snapshot still tells how far the game got: it is only ever written
        # after its last entry was on disk, so any entry up to it that no file holds
        # now is lost, never "repaired"
        reading.max_seq = max(reading.max_seq, claimed)


def read_journal(path: Path, reading: Reading) -> None:
    """Read the journal at ``path`` line by line into ``reading`` (after the snapshot).
    Entries before an intact ``setup`` line can no longer be part of the game to resume
    (that setup starts a newer one reaching at least as far), so they are dropped as
    soon as it is read: memory holds one game, whatever the file."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        if reading.snapshot and reading.snapshot[1]:
            # the journal is made before the first snapshot and only ever replaced
            # atomically: a missing one is damage, and is rewritten as a full copy
            reading.problems.append(f"{path}: missing, though the snapshot holds a game")
        return
    except OSError as exc:
        reading.problems.append(f"{path}: cannot read ({reason_of(exc)})")
        return
    try:
        with fh:
            size, nul_only = _read_lines(path, fh, reading)
    except OSError as exc:
        reading.problems.append(f"{path}: cannot read ({reason_of(exc)})")
        return
    if not size and reading.snapshot and reading.snapshot[1]:
        reading.problems.append(f"{path}: empty, though the snapshot holds a game")
    if size and nul_only:                       # the whole file zeroed: one finding
        reading.damaged.clear()
        reading.problems.append(f"{path}: unusable (NUL-filled, {size} bytes)")
    if reading.damaged or (size and nul_only):
        reading.damaged_files.append(path)


def _read_lines(path: Path, fh, reading: Reading) -> tuple[int, bool]:
    """Parse every line of ``fh`` (the journal at ``path``) into ``reading``; returns
    (bytes read, True when the file holds nothing but NUL bytes)."""
    known, size, nul_only, whole = 0, 0, True, 0
    for lineno, (start, raw, ended) in enumerate(lines_of(fh), start=1):
        size = start + (len(raw) if isinstance(raw, bytes) else 0) + ended
        nul_only = nul_only and not ended and (raw == "NUL bytes" or (
            isinstance(raw, bytes) and not raw.strip(b"\0")))
        parsed = parse_line(raw, known) if isinstance(raw, bytes) else raw
        if isinstance(parsed, str):
            reading.damaged.append((lineno, start, parsed))
            whole += 1
            if ended and isinstance(raw, bytes) and claimed_seq(raw):
                # a whole line that still starts as an entry was one (a last fragment
                # without a line end is an append cut short, never shown): it and every
                # damaged line before it held entries after the last intact one
                reading.trailing = whole
            continue
        if not ended:
            reading.problems.append(f"{path}: line {lineno} has no line end (its write "
                                    f"was cut short); kept it")
        whole = _take_line(reading, parsed, lineno, start, whole)
        known = parsed[0]
    if reading.trailing and reading.last_seq:
        # whole lines damaged after the last intact entry held entries after it: lost,
        # unless the snapshot holds them
        reading.max_seq = max(reading.max_seq, reading.last_seq + reading.trailing)
    return max(size, fh.tell()), nul_only


def _take_line(reading: Reading, parsed: tuple, lineno: int, start: int, whole: int) -> int:
    """Keep an intact line (its own body, or only its copy of the one before when its
    body is damaged: then a "checksum mismatch" at ``lineno``, byte ``start``); returns
    the count of whole damaged lines since the last entry known."""
    reading.take(parsed)
    if parsed[0]:
        reading.last_seq, reading.trailing = parsed[0], 0
        return 0
    reading.damaged.append((lineno, start, "checksum mismatch"))
    if parsed[2] is not None:
        reading.last_seq, reading.trailing = parsed[2][0], 1
        return 1
    return whole


def merge(reading: Reading) -> tuple[int, list[dict]]:
    """The newest game state reachable without a gap: from the snapshot or from any
    setup entry, extended by consecutive entries. Returns (its seq, effective entries)."""
    bodies = dict(reading.copies)
    bodies.update(reading.bodies)
    reading.max_seq = max([reading.max_seq] + list(bodies))
    reading.bodies = bodies
    bases = [(s - 1, []) for s, b in bodies.items() if b.get("kind") == "setup"]
    if reading.snapshot is not None:
        bases.append(reading.snapshot)
    # where the run of consecutive seqs after each seq ends, in one pass (a journal of
    # the old design holds thousands of games: walking from every setup was quadratic)
    reach: dict[int, int] = {}
    for seq in sorted(bodies, reverse=True):
        reach[seq] = reach.get(seq + 1, seq)
    best_base, best_end = None, 0
    for seq, entries in bases:
        end = reach.get(seq + 1, seq)
        if end > best_end:
            best_base, best_end = (seq, entries), end
    if best_base is None:
        return 0, []
    seq, entries = best_base
    return best_end, effective(list(entries) + [bodies[s] for s in range(seq + 1, best_end + 1)])


def report(reading: Reading, found: Loaded, path: Path, folder: Path) -> None:
    """Fill ``found``'s problems (the damaged lines of the journal at ``path``, the
    entries of ``folder`` that could not be recovered), ``lost`` and ``notice``."""
    for lineno, offset, why in reading.damaged:
        found.problems.append(f"{path}: line {lineno} (byte {offset}): {why}; skipped")
    turns = sum(1 for e in found.entries if e.get("kind") == "turn")
    if reading.max_seq > found.seq:
        found.lost = lost_text(turns, _lost_turns(reading, found.seq))
        found.problems.append(f"{folder}: entries {found.seq + 1}-{reading.max_seq} could "
                              f"not be recovered: {found.lost}")
    if reading.damaged:
        found.notice = _skipped_notice(reading.damaged, turns, found.lost)
    if found.lost:
        found.notice = found.lost if not found.notice else f"{found.lost}; {found.notice}"
    elif found.problems and not found.entries:
        found.notice = "journal damaged: no game to resume"
    elif found.problems and not found.notice:
        found.notice = f"journal repaired; resumed at turn {turns}"


def _lost_turns(reading: Reading, seq: int) -> int:
    """How many turns after ``seq`` (the one resumed at) are lost (>= 1): every seq up to
    the highest known is a lost turn, unless its body is known to be something else
    (counted over the bodies held, never over the whole span: a damaged seq can be huge)."""
    others = sum(1 for s, b in reading.bodies.items()
                 if seq < s <= reading.max_seq and b.get("kind") != "turn")
    return (reading.max_seq - seq - others) or 1


def _skipped_notice(damaged: list[tuple[int, int, str]], turns: int, lost: str) -> str:
    """The OLED's words for the ``damaged`` lines skipped, e.g. "journal: 2 bad entries
    skipped (line 3, 7); resumed at turn 5" (the turn only when nothing is ``lost``)."""
    lines = ", ".join(str(d[0]) for d in damaged[:3])
    more = "..." if len(damaged) > 3 else ""
    notice = (f"journal: {len(damaged)} bad "
              f"entr{'y' if len(damaged) == 1 else 'ies'} skipped "
              f"(line {lines}{more})")
    return notice if lost else f"{notice}; resumed at turn {turns}"
