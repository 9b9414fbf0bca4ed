"""The table in play: a person's turn, the questions about a move, leather, and verdicts.

Handlers of :class:`~.table.Table` for ``turn``, ``confirm`` and ``leather``
(``HANDLERS``), and :func:`judged`, which turns the token watcher's verdicts
(:mod:`.tokens`) into moves. What is never guessed: a move the token alone cannot
tell (a move onto the other token, from a shared space, or one after which the same
player moves again) is asked about ("Which move?", "1 move or 2?") or confirmed with OK.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import DISCARD, Buy, PlaceLeather
from . import intents
from .buttons import HOLD, PRESS, Gesture
from .tokens import ASK, LIFTED, MISMATCH, MOVE, ONTO, REVISE, STILL, THEN, WAIT, Verdict
from .view import PLAY_MODES, Mode

if TYPE_CHECKING:
    from .table import Table

_MOVES = {MOVE: (False, False), ONTO: (True, False), THEN: (False, True)}
"""Verdicts that put the mover's token on a target: (onto the other token, final)."""
_SETTLED = frozenset({STILL, MISMATCH, MOVE, ONTO, THEN, ASK, LIFTED})
"""Verdicts that decide the guidance shown (a mismatch, or none); others leave it."""


def judged(t: Table, v: Verdict) -> None:
    """The token watcher's verdict ``v`` on the current stable reading."""
    if v.kind == WAIT and not (v.expected or v.wrong):
        return                  # a hand is still moving: keep showing what was shown
    t.guide = v if (v.expected or v.wrong) else None
    if v.kind == REVISE and t.tentative is not None:
        revise(t, v.target, v.choices, v.stops)
        return
    if t.mode not in PLAY_MODES or t.session is None:
        return
    if t.mode == Mode.CONFIRM and v.kind in (STILL, LIFTED, MISMATCH, WAIT):
        t.to_turn(keep_intent=True)     # the token left the space asked about
    if v.kind in _SETTLED:
        t.mismatch = v if v.kind == MISMATCH else None
    if v.kind in _MOVES:
        onto, final = _MOVES[v.kind]    # THEN: quick hands, the first move first, final at once
        token_moved(t, v.target, onto=onto, final=final, stops=v.stops)
    elif v.kind == ASK:                 # quick hands in an order the readings cannot tell
        ask(t, sorted(v.choices))


def on_turn(t: Table, g: Gesture) -> None:
    """A person's turn: NEXT browses the patches and advance, OK arms (or, without a
    sensor, takes) the choice, BACK drops it (or shows the box's last turn again)."""
    if t.play_hold(g):
        return
    if g.button == "next":
        options = intents.turn_options(t.state)
        at = options.index(t.intent) + 1 if t.intent in options else 0
        t.intent = options[at % len(options)]
        t.armed = False
        t.notice = ""
    elif g.button == "back":
        if t.intent is None and t.box.last() is not None:
            t.mode = Mode.BOX_REVIEW             # the box's last turn shown again
        t.intent, t.armed, t.notice = None, False, ""
    elif g.button == "ok":
        t.instruction = t.tip = ""
        _arm(t)


def _arm(t: Table) -> None:
    action = t.intent
    who = t.who(t.state.to_move)
    if action is None:
        t.notice = f"{who}: NEXT chooses a patch"
        return
    reason = intents.why_not(t.state, action)
    if reason:
        t.notice = f"{who} can't: {reason}"
        return
    if not t.sensor_online or t.armed:
        t.play(action)      # no sensor (or OK twice): the buttons alone decide
        return
    t.armed = True
    target = intents.target_of(t.state, action)
    pay = f"pay {t.state.spec.patches[action.patch].cost}, " if isinstance(action, Buy) else ""
    t.notice = f"{who}: {pay}move to space {target}"


def token_moved(t: Table, target: int, onto: bool, final: bool = False,
                stops: tuple[int, ...] = ()) -> None:
    """The mover's token stands on ``target``: play the move chosen with OK, play a
    lone advance (tentative unless ``final``), or ask which move it was. After
    ``stops`` on the way (spaces where it rested long enough to have made a move
    there), several turns of the same player may end here: see :func:`_moved_on`.

    Browsing with NEXT is not choosing (only OK arms a choice); after OK only
    the chosen action's space counts (the expectation offers no other); see
    :func:`plain` for what is never guessed."""
    if t.mode == Mode.BOX:
        t.box.token(target)
        return
    state = t.state
    chosen = t.intent if t.armed else None
    if chosen is not None and intents.target_of(state, chosen) == target \
            and not intents.why_not(state, chosen):
        t.play(chosen)
        return
    if stops and chosen is None and _moved_on(t, target, stops, final, onto):
        return
    found = intents.candidates_at(state, target)
    if not found:
        return
    if len(found) == 1 and not onto and plain(t, found[0]):
        t.play(found[0], tentative=not final)
        return
    ask(t, found)


def _moved_on(t: Table, target: int, stops: tuple[int, ...], final: bool, onto: bool) -> bool:
    """The token came to ``target`` after stopping on ``stops``: when some reading of
    several turns of the mover (a move on a stop, then more) is legal, ask which
    reading it was ("1 move or 2?"), or take the only one and say so (its last
    move tentative as a lone move is, unless ``final``). The only reading is still
    asked when its last move is no lone move (:func:`plain`) or the token seems
    to be on the other (``onto``: it may be in the air). False when only one-move
    readings are legal (asked or taken as usual)."""
    found = intents.readings(t.state, stops, target)
    if all(len(r) == 1 for r in found):
        return False
    last_state, last = intents.reading_steps(t.state, found[0])[-1]
    if len(found) > 1 or onto or not plain(t, last, last_state):
        if not (t.mode == Mode.CONFIRM and t.readings == found):
            t.mode, t.candidates, t.readings, t.cursor = Mode.CONFIRM, [], found, 0
        return True
    said = intents.reading_words(t.state, found[0])
    if play_reading(t, found[0], tentative=not final):
        t.tip = f"read as {said}"            # the only legal reading: say so
    return True


def play_reading(t: Table, reading, tentative: bool = False) -> bool:
    """Commit the moves of ``reading`` in order, each with what follows by itself; the
    last stays ``tentative`` when it is a lone move (see :func:`plain`). The turn
    screen says what they all ask. False when a move was refused (the ones before it
    stand: each was legal where it was made)."""
    events: list = []
    for i, action in enumerate(reading):
        last = i == len(reading) - 1
        group, state = t.group(action)
        if state is None or not t.commit(group, tentative and last and plain(t, action)):
            return False
        events += t.events
    if len(reading) > 1:
        t.instruction = intents.notices(events, t.session.setup.seat_names())
    return True


def plain(t: Table, action, state=None) -> bool:
    """A lone move the token alone may make (in ``state``, default the game's): not from
    a space both tokens share (a knock looks the same), and the other player moves
    next (or the game ends), so the same token moving on can only revise it, never be
    a second move."""
    state = t.state if state is None else state
    if state.players[0].position == state.players[1].position:
        return False
    after = intents.after_move(state, action)
    return after.over or after.to_move == 1 - state.to_move


def ask(t: Table, found) -> None:
    """Ask "Which move?" about ``found`` (actions or target spaces), unless already asked."""
    if t.mode == Mode.BOX:                       # only the box's own target counts
        if t.box.move is not None and t.box.move.target in found:
            t.box.token(t.box.move.target)
        return
    if found and isinstance(found[0], int):
        found = [a for target in found for a in intents.candidates_at(t.state, target)]
    if not found:
        return
    chosen = t.intent if t.armed else None
    if chosen in found:              # a choice made with OK is never asked again:
        found = [chosen]             # only whether it was made
    if t.mode == Mode.CONFIRM and t.candidates == found:
        return
    t.mode, t.candidates, t.readings, t.cursor = Mode.CONFIRM, found, [], 0


def revise(t: Table, target: int | None, then=frozenset(), stops: tuple[int, ...] = ()) -> None:
    """The tentative last move's token moved on to ``target`` (or back home: None):
    the move is taken back (journalled as an undo) and the new reading judged (with
    the ``stops`` on the way). With ``then``, the other player moved quickly after
    it: the revised move is final."""
    t.tentative = None
    t.write({"kind": "undo"})
    group = t.session.undo()
    back = t.undo_words(group)                 # "Green: return 2 buttons; token back to 5"
    t.mismatch = None
    t.to_turn()
    t.notice, t.tip = "", ""
    if target is None:
        t.instruction = back
        return
    turns = len(t.session.groups)
    token_moved(t, target, onto=False, final=bool(then), stops=stops)
    given = back.split("; token back")[0]      # the token moved on: only what to give back
    if len(t.session.groups) > turns:
        t.instruction = f"changed: {t.instruction or 'no buttons'}"
    else:
        t.instruction = ""
    what = given.split(": ", 1)[-1]
    if what not in ("turn undone", "token back"):
        t.tip = f"the rest was no move: {what}"     # e.g. "return 2 buttons"


def on_confirm(t: Table, g: Gesture) -> None:
    """"Which move?" / "1 move or 2?": NEXT the other option, OK yes, BACK no (the token
    goes back), hold BACK drops the question."""
    if g.kind == HOLD:
        if g.button == "back":
            _drop_question(t)
        return
    if g.button == "next":
        t.cursor = (t.cursor + 1) % len(t.readings or t.candidates)
    elif g.button == "ok" and t.readings:
        play_reading(t, t.readings[t.cursor])
    elif g.button == "ok":
        t.play(t.candidates[t.cursor])
    elif g.button == "back":
        t.forget_reading()
        t.to_turn()
        t.notice = f"{t.who(t.state.to_move)}: move the token back"


def _drop_question(t: Table) -> None:
    """Undo while a question is open: what is undone is the move asked about (never
    recorded), not the turn before it; its token goes back where the game has it."""
    mover = t.state.to_move
    t.forget_reading()
    t.mismatch = None
    t.to_turn()
    t.notice = t.tip = ""
    t.instruction = f"{t.who(mover)}: token back to {t.state.players[mover].position}"


def on_leather(t: Table, g: Gesture) -> None:
    """Express: OK places the leather patch won, NEXT sets it aside; hold BACK undoes."""
    if g.kind == HOLD and g.button == "back":
        t.undo()
    elif g.kind == PRESS and g.button in ("ok", "next"):
        t.commit([PlaceLeather() if g.button == "ok" else DISCARD])


HANDLERS = {Mode.TURN: on_turn, Mode.CONFIRM: on_confirm, Mode.LEATHER: on_leather}
