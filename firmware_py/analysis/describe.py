"""Words for an analysis: what a move was, one sentence per decision, and the notes
that say what a record lets the analysis judge."""
from __future__ import annotations

ORDINALS = ("1st", "2nd", "3rd")


def patch_words(spec, pid: int) -> str:
    """``"#12 (5 buttons, 3 time, +2 income)"``: a patch with its cost, time and income."""
    p = spec.patches[pid]
    buttons = "button" if p.cost == 1 else "buttons"
    return f"#{pid} ({p.cost} {buttons}, {p.time} time, +{p.income} income)"


def move(spec, circle: tuple[int, ...], choice: tuple, free: bool) -> str:
    """A searcher's choice in words, before it is made: ``(-1, None)`` is action A,
    ``(k, mask)`` the patch ``circle[k]`` (in a dealt layout also where it lies in front
    of the neutral token, R3)."""
    k = choice[0]
    if k < 0:
        return "advance"
    if free or k > 2:
        return f"buy patch {patch_words(spec, circle[k])}"
    return f"buy the {ORDINALS[k]} patch, {patch_words(spec, circle[k])}"


def percent(share: float) -> str:
    """A share 0..1 as whole percent with its sign, e.g. ``"+18%"``."""
    return f"{share * 100:+.0f}%"


def sentence(row: dict) -> str:
    """One decision in words, e.g. ``"Turn 14: you chose advance; buy patch #12 (5 buttons,
    3 time, +2 income) was worth +18% +/- 4% win chance, about +6 points"``."""
    head = f"Turn {row['turn']}: you chose {row['played']}"
    if row["forced"]:
        return head + " (the only legal move)"
    if row["played"] == row["best"] or row["cost"] <= 0:
        return head + "; the box agrees"
    return (f"{head}; {row['best']} was worth {percent(row['cost'])} +/- "
            f"{row['pm'] * 100:.0f}% win chance, about {row['points']:+.0f} points")


def notes(record) -> list[str]:
    """What the analysis of ``record`` judges and what it cannot (sentences)."""
    out = []
    if record.tracked:
        out.append("Quilts tracked: placements are judged against the box's own placement.")
    else:
        out.append("Quilts not tracked: placements are not judged (quilts are counted by "
                   "empty squares; the 7x7 special tile as claimed).")
    if record.free:
        out.append("Free layout: any patch left could be bought, so every affordable patch "
                   "was a choice.")
    if any(isinstance(m, dict) and "adjust" in m for m in record.moves):
        out.append("Button corrections are applied where they were made; they are not decisions.")
    box = (record.meta or {}).get("box_quilt") if isinstance(record.meta, dict) else None
    if isinstance(box, dict) and box.get("player") in (0, 1):
        seat = ("first", "second")[box["player"]]
        out.append(f"A game against the box (it took the {seat} turn, level "
                   f"{box.get('level') or '?'}): its own decisions are judged too.")
    if record.result is None and not _over(record):
        out.append("The game was not played to its end: only the moves made are judged.")
    return out


def _over(record) -> bool:
    from ..rules import replay
    return replay(record)[0].over


def report_lines(analysis: dict, names: tuple[str, str], per_player: int = 3) -> list[str]:
    """The analysis as text lines: notes, the win-chance curve (one line per ten
    positions), and each player's ``per_player`` costliest decisions."""
    if "error" in analysis:
        return [f"analysis: this game could not be analysed ({analysis['error']})"]
    lines = [f"analysis ({analysis['settings']['iterations']} search iterations and "
             f"{analysis['settings']['playouts']} playouts per decision):"]
    lines += [f"  {n}" for n in analysis["notes"]]
    lines.append(f"chance that {names[0]} wins, after each decision (frame: percent):")
    pts = analysis["points"]
    for i in range(0, len(pts), 10):
        lines.append("  " + "  ".join(f"{p['frame']:>3}:{p['chance'] * 100:3.0f}%"
                                      for p in pts[i:i + 10]))
    for seat in (0, 1):
        lines.append(f"{names[seat]}: the costliest decisions")
        worst = costliest(analysis, seat, per_player)
        lines += [f"  move {d['frame']}: {d['text']}" for d in worst] or \
            ["  none: the box agrees with every decision"]
    return lines


def costliest(analysis: dict, player: int, n: int = 3) -> list[dict]:
    """The ``n`` decisions of ``player`` (0/1) that cost the most win chance, costliest
    first; only decisions that cost something (cost above 0) are listed."""
    mine = [d for d in analysis["decisions"] if d["player"] == player and d["cost"] > 0]
    return sorted(mine, key=lambda d: (-d["cost"], d["move"]))[:n]
