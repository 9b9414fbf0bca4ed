"""The table's state machine: button gestures and token verdicts in, turns out.

Owned by the service's event-loop thread. It turns gestures (NEXT/OK/BACK,
press or hold) and token verdicts into engine actions, journals every
accepted turn before anything shows it, and knows what the OLED and the LEDs
must show (see :mod:`.screens`). Nothing in the game changes on a rejected
input: an illegal choice only sets a notice.
"""
from __future__ import annotations

from typing import Callable

from ..rules import (DISCARD, Advance, Buy, ClaimSpecialTile, DiscardLeather, IllegalActionError,
                     PlaceLeather, load_spec)
from . import intents
from .box_table import BoxTable
from .buttons import HOLD, PRESS, Gesture
from .journal import JournalError
from .model import GREEN, YELLOW
from .opponent import BOX_NAME, LEVELS, Think
from .session import Correction, Session, Setup, now_text
from .tokens import (ASK, LIFTED, MISMATCH, MOVE, ONTO, REVISE, STILL, THEN, WAIT, Expectation,
                     Verdict)

GAMES = (("patchwork", "Patchwork"), ("patchwork-express", "Patchwork Express"))
BOARDS = (("2014", "2014 board"), ("revised", "revised board"))
PLAYERS = (("", "Two players"),) + tuple((level, f"Box ({level})") for level in LEVELS)
"""The "Who plays?" choices: two people, or one person against the box at a level."""
MENU_ITEMS = ("Back to game", "Undo last turn", "Claim 7x7 tile", "Correct buttons", "End game now",
              "Web PIN")
"""The menu's entries; "Web PIN" asks the LAN page for a PIN to show on the OLED (only
someone at the box can ask this way, so no stranger's guessing can hold it up)."""
HINT_ITEM = "Ask the box"


class TableUI(BoxTable):
    """The UI state machine.

    ``journal_write(body)`` writes one journal entry durably (may raise
    JournalError: the game goes on in memory with a warning);
    ``deal(game)`` returns ``(circle, blue)`` for a new game; ``on_end(session)``
    saves the finished game's record and returns where (a path string);
    ``wall_time()`` is the wall-clock time as RFC 3339 text (when a game
    starts and ends, for its record); ``think``: starts the box's search (see
    :mod:`.box_table`), or None: then setup offers no game against the box and
    the menu no hint.
    """

    def __init__(self, journal_write: Callable[[dict], None], deal: Callable, on_end: Callable,
                 wall_time: Callable[[], str] = now_text, think: Think | None = None):
        self.think = think
        self.box_journalled = False
        self.journal_write = journal_write
        self.deal = deal
        self.on_end = on_end
        self.wall_time = wall_time
        self.session: Session | None = None
        self.mode = "setup_game"
        self.cursor = 0
        self.choice: dict = {}
        self.armed = False
        self.intent = None          # the action chosen with NEXT in turn mode
        self.candidates: list = []
        self.readings: list = []    # "1 move or 2?": readings (tuples of actions) asked about
        self.notice = ""            # a passing word on the turn screen (a refusal, a target)
        self.instruction = ""       # what the last move asks of whom; kept until a move or OK
        self.tip = ""               # a one-time explanation shown with the instruction
        self.grey_told = False      # the dotted (unbuyable) patch picture was explained
        self.mismatch: Verdict | None = None
        self.guide: Verdict | None = None
        self.warnings: dict[str, str] = {}
        self.saved_to = ""
        self.correct_player = 0
        self.correct_delta = 0
        self.consume_reading = False
        self.tentative = None       # the state before the last move while it is tentative
        self._events: tuple = ()    # the events of the last turn committed
        self.known_names: Callable[[], list[str]] = list   # stored player names (names.py)
        self.pin_asked = 0          # how often the menu asked for a web PIN (on the live feed)

    # ----- resume ---------------------------------------------------------------
    def resume(self, entries: list[dict]) -> None:
        """Rebuild the game from the journal's effective entries (setup, turns, end)."""
        if not entries or entries[0].get("kind") != "setup":
            return
        session = Session(Setup.from_json(entries[0]["setup"]))
        ended = False
        self.tentative = None
        self.session = session
        self.box_move = self.box_state = None
        for body in entries[1:]:
            if body.get("kind") == "turn":
                before = session.state
                group = session.group_from_json(body["moves"])
                session.commit(group, self._box_replayed(body, group))
                self.tentative = before if body.get("tentative") else None
            elif body.get("kind") == "plan":
                self._box_resume_plan(body.get("plan"))
            elif body.get("kind") == "end":
                ended = True
                at = body.get("ended", "")
                session.ended = at if isinstance(at, str) else ""
        self.box_journalled = self.box_move is not None
        self.mode = "end" if ended or session.state.over else self._play_mode()
        if self.mode == "end":
            self.tentative = None
        elif self.mode == "box":
            self._box_ready()
        self.cursor = 0

    # ----- inputs -----------------------------------------------------------------
    def gesture(self, g: Gesture) -> None:
        """Handle one classified button gesture."""
        if g.kind in (PRESS, HOLD):
            self.tentative = None   # a player acted: the last move is final
        handler = getattr(self, f"_on_{self.mode}", None)
        if handler is not None:
            handler(g)

    def verdict(self, v: Verdict) -> None:
        """Handle the token watcher's verdict on the current stable reading."""
        shown = self.box_fresh      # the box's move was shown before this reading came
        self._judged(v)
        if shown:
            self.box_fresh = False  # it has now met the board once

    def _judged(self, v: Verdict) -> None:
        if v.kind == WAIT and not (v.expected or v.wrong):
            return                  # a hand is still moving: keep showing what was shown
        self.guide = v if (v.expected or v.wrong) else None
        if v.kind == REVISE and self.tentative is not None:
            self._revise(v.target, v.choices, v.stops)
            return
        if self.mode not in ("turn", "confirm", "box") or self.session is None:
            return
        if self.mode == "confirm" and v.kind in (STILL, LIFTED, MISMATCH, WAIT):
            self._to_turn(keep_intent=True)     # the token left the space asked about
        if v.kind == STILL:
            self.mismatch = None
        elif v.kind == MISMATCH:
            self.mismatch = v
        elif v.kind == MOVE:
            self.mismatch = None
            self._token_moved(v.target, onto=False, stops=v.stops)
        elif v.kind == ONTO:
            self.mismatch = None
            self._token_moved(v.target, onto=True, stops=v.stops)
        elif v.kind == THEN:          # quick hands: the first move first, final at once
            self.mismatch = None
            self._token_moved(v.target, onto=False, final=True, stops=v.stops)
        elif v.kind == ASK:           # quick hands in an order the readings cannot tell
            self.mismatch = None
            self._ask(sorted(v.choices))
        elif v.kind == LIFTED:
            self.mismatch = None

    def sensor_status(self, online: bool, text: str) -> None:
        """The sensor link went online/offline; shown as a warning while offline."""
        if online:
            self.warnings.pop("sensor", None)
        else:
            self.warnings["sensor"] = text or "sensor offline"

    # ----- setup ------------------------------------------------------------------
    def _choose(self, g: Gesture, count: int, on_ok: Callable[[int], None], on_back=None) -> None:
        if g.kind != PRESS:
            return
        if g.button == "next":
            self.cursor = (self.cursor + 1) % count
        elif g.button == "ok":
            chosen, self.cursor = self.cursor, 0
            on_ok(chosen)
        elif g.button == "back" and on_back is not None:
            self.cursor = 0
            on_back()

    def _after_board(self) -> str:
        """The setup step after the game and time board: who plays, when the box can."""
        return "setup_players" if self.think is not None else "setup_first"

    def _on_setup_game(self, g: Gesture) -> None:
        def _ok(i):
            self.choice = {"game": GAMES[i][0], "level": ""}
            self.mode = "setup_board" if GAMES[i][0] == "patchwork" else self._after_board()
            if GAMES[i][0] != "patchwork":
                self.choice["time_board"] = "standard"
        self._choose(g, len(GAMES), _ok)

    def _on_setup_board(self, g: Gesture) -> None:
        def _ok(i):
            self.choice["time_board"] = BOARDS[i][0]
            self.mode = self._after_board()
        self._choose(g, len(BOARDS), _ok, lambda: setattr(self, "mode", "setup_game"))

    def _on_setup_players(self, g: Gesture) -> None:
        def _ok(i):
            self.choice["level"] = PLAYERS[i][0]
            self.mode = "setup_first"
        back = "setup_board" if self.choice.get("game") == "patchwork" else "setup_game"
        self._choose(g, len(PLAYERS), _ok, lambda: setattr(self, "mode", back))

    def _on_setup_first(self, g: Gesture) -> None:
        def _ok(i):
            self.choice["first"] = (GREEN, YELLOW)[i]
            self.choice["names"] = {YELLOW: BOX_NAME} if self.choice.get("level") else {}
            stored = list(self.known_names())
            self.choice["known"] = stored
            self.mode = "setup_names" if stored else "setup_layout"
        back = "setup_board" if self.choice.get("game") == "patchwork" else "setup_game"
        if self.think is not None:
            back = "setup_players"
        self._choose(g, 2, _ok, lambda: setattr(self, "mode", back))

    # ----- names (a separate step, only when names are stored: see companion/names.py) -----
    def naming(self) -> str:
        """The colour whose name is chosen now (setup_names mode)."""
        return GREEN if GREEN not in self.choice["names"] else YELLOW

    def name_options(self) -> list[str]:
        """The names offered for :meth:`naming`: its colour first (the default), then the
        stored names not taken by the other player."""
        colour = self.naming()
        taken = set(self.choice["names"].values())
        return [colour.capitalize()] + [n for n in self.choice["known"] if n not in taken]

    def _on_setup_names(self, g: Gesture) -> None:
        options = self.name_options()

        def _ok(i):
            self.choice["names"][self.naming()] = options[i]
            if len(self.choice["names"]) == 2:
                self.mode = "setup_layout"

        def _back():
            if GREEN in self.choice["names"]:
                self.choice["names"].pop(GREEN)
            else:
                self.mode = "setup_first"
        self._choose(g, len(options), _ok, _back)

    def _on_setup_layout(self, g: Gesture) -> None:
        def _ok(i):
            circle, blue = self.deal(self.choice["game"])
            self.choice.update(circle=tuple(circle), blue=tuple(blue), free=(i == 1))
            if i == 1:
                self._start_game()
            else:
                self.mode, self.cursor = "deal", 0
        def _back():
            if self.choice.get("known"):               # back to the last name chosen
                self.choice["names"].pop(GREEN if self.choice.get("level") else YELLOW, None)
                self.mode = "setup_names"
            else:
                self.mode = "setup_first"
        self._choose(g, 2, _ok, _back)

    def _on_deal(self, g: Gesture) -> None:
        if g.kind != PRESS:
            return
        total = len(self.choice["circle"])
        if g.button in ("next", "ok"):
            if self.cursor + 1 < total:
                self.cursor += 1
            elif g.button == "ok":
                self._start_game()
        elif g.button == "back":
            if self.cursor == 0:
                self.mode = "setup_layout"
            else:
                self.cursor -= 1

    def _start_game(self) -> None:
        c = self.choice
        names = c.get("names") or {}
        chosen = (names.get(GREEN, "Green"), names.get(YELLOW, "Yellow"))
        level = c.get("level", "")
        setup = Setup(c["game"], c["time_board"], c["first"], c["circle"], c["blue"], c["free"],
                      chosen if chosen != ("Green", "Yellow") else (), started=self.wall_time(),
                      box=YELLOW if level else "", level=level)
        self._write({"kind": "setup", "setup": setup.to_json()})
        self.session = Session(setup)
        self.box_move = self.box_state = None
        self.consume_reading = True     # the board still shows the last game: forget it
        self._to_turn()
        self._explain_grey()

    # ----- play -------------------------------------------------------------------
    @property
    def state(self):
        """The engine state of the game in progress (None during setup)."""
        return self.session.state if self.session else None

    def _play_mode(self) -> str:
        state = self.state
        if state.owed and state.spec.bonus_square == 0:
            return "leather"
        return "box" if self.box_to_move() else "turn"

    def _to_turn(self, keep_intent: bool = False) -> None:
        self.mode = self._play_mode()
        self.candidates = []
        if not keep_intent or self.mode == "box":
            self.intent, self.armed = None, False
        if self.mode == "box":
            self._box_ready()

    def options(self) -> list:
        """The NEXT cycle in turn mode: each patch on offer, then advance."""
        return intents.turn_options(self.state)

    def selected(self):
        """The action shown as chosen with NEXT in turn mode (kept while a move is confirmed),
        or None. Browsing alone never makes a move: see :meth:`armed_action`."""
        return self.intent

    def armed_action(self):
        """The action chosen with NEXT and confirmed with OK (only its space counts), or None."""
        return self.intent if self.armed else None

    def _play_hold(self, g: Gesture) -> bool:
        """The holds of play: OK opens the menu, BACK undoes the last turn. True when ``g``
        was a hold (handled here)."""
        if g.kind != HOLD:
            return False
        if g.button == "ok":
            self.mode, self.cursor = "menu", 0
        elif g.button == "back":
            self._undo()
        return True

    def _on_turn(self, g: Gesture) -> None:
        if self._play_hold(g):
            return
        if g.button == "next":
            options = self.options()
            at = options.index(self.intent) + 1 if self.intent in options else 0
            self.intent = options[at % len(options)]
            self.armed = False
            self.notice = ""
        elif g.button == "back":
            if self.intent is None and self.last_box_move() is not None:
                self.mode = "box_review"             # the box's last turn shown again
            self.intent, self.armed, self.notice = None, False, ""
        elif g.button == "ok":
            self.instruction = self.tip = ""
            self._arm()

    def _arm(self) -> None:
        action = self.selected()
        who = self._who(self.state.to_move)
        if action is None:
            self.notice = f"{who}: NEXT chooses a patch"
            return
        reason = intents.why_not(self.state, action)
        if reason:
            self.notice = f"{who} can't: {reason}"
            return
        if "sensor" in self.warnings or self.armed:
            self._play(action)      # no sensor (or OK twice): the buttons alone decide
            return
        self.armed = True
        target = intents.target_of(self.state, action)
        pay = f"pay {self.state.spec.patches[action.patch].cost}, " if isinstance(action, Buy) else ""
        self.notice = f"{who}: {pay}move to space {target}"

    def _token_moved(self, target: int, onto: bool, final: bool = False,
                     stops: tuple[int, ...] = ()) -> None:
        """The mover's token stands on ``target``: play the move chosen with OK, play a
        lone advance (tentative unless ``final``), or ask which move it was. After
        ``stops`` on the way (spaces where it rested long enough to have made a move
        there), several turns of the same player may end here: see :meth:`_moved_on`.

        Browsing with NEXT is not choosing (only OK arms a choice); after OK only
        the chosen action's space counts (:meth:`expectation` offers no other); see
        :meth:`_plain` for what is never guessed."""
        if self.mode == "box":
            self._box_token(target)
            return
        state = self.state
        chosen = self.armed_action()
        if chosen is not None and intents.target_of(state, chosen) == target \
                and not intents.why_not(state, chosen):
            self._play(chosen)
            return
        if stops and chosen is None and self._moved_on(target, stops, final, onto):
            return
        found = intents.candidates_at(state, target)
        if not found:
            return
        if len(found) == 1 and not onto and self._plain(found[0]):
            self._play(found[0], tentative=not final)
            return
        self._ask(found)

    def _moved_on(self, target: int, stops: tuple[int, ...], final: bool, onto: bool) -> bool:
        """The token came to ``target`` after stopping on ``stops``: when some reading of
        several turns of the mover (a move on a stop, then more) is legal, ask which
        reading it was ("1 move or 2?"), or take the only one and say so (its last
        move tentative as a lone move is, unless ``final``). The only reading is still
        asked when its last move is no lone move (:meth:`_plain`) or the token seems
        to be on the other (``onto``: it may be in the air). False when only one-move
        readings are legal (asked or taken as usual)."""
        found = intents.readings(self.state, stops, target)
        if all(len(r) == 1 for r in found):
            return False
        last_state, last = intents.reading_steps(self.state, found[0])[-1]
        if len(found) > 1 or onto or not self._plain(last, last_state):
            if not (self.mode == "confirm" and self.readings == found):
                self.mode, self.candidates, self.readings, self.cursor = "confirm", [], found, 0
            return True
        said = intents.reading_words(self.state, found[0])
        if self._play_reading(found[0], tentative=not final):
            self.tip = f"read as {said}"            # the only legal reading: say so
        return True

    def _play_reading(self, reading, tentative: bool = False) -> bool:
        """Commit the moves of ``reading`` in order, each with what follows by itself; the
        last stays ``tentative`` when it is a lone move (see :meth:`_plain`). The turn
        screen says what they all ask. False when a move was refused (the ones before it
        stand: each was legal where it was made)."""
        events: list = []
        for i, action in enumerate(reading):
            last = i == len(reading) - 1
            group, state = self._group(action)
            if state is None or not self._commit(group, tentative and last and self._plain(action)):
                return False
            events += self._events
        if len(reading) > 1:
            self.instruction = intents.notices(events, self.session.setup.seat_names())
        return True

    def _plain(self, action, state=None) -> bool:
        """A lone move the token alone may make (in ``state``, default the game's): not from
        a space both tokens share (a knock looks the same), and the other player moves
        next (or the game ends), so the same token moving on can only revise it, never be
        a second move."""
        state = self.state if state is None else state
        if state.players[0].position == state.players[1].position:
            return False
        after = _after(state, action)
        return after.over or after.to_move == 1 - state.to_move

    def _ask(self, found) -> None:
        """Ask "Which move?" about ``found`` (actions or target spaces), unless already asked."""
        if self.mode == "box":                       # only the box's own target counts
            if self.box_move is not None and self.box_move.target in found:
                self._box_token(self.box_move.target)
            return
        if found and isinstance(found[0], int):
            found = [a for t in found for a in intents.candidates_at(self.state, t)]
        if not found:
            return
        chosen = self.armed_action()
        if chosen in found:              # a choice made with OK is never asked again:
            found = [chosen]             # only whether it was made
        if self.mode == "confirm" and self.candidates == found:
            return
        self.mode, self.candidates, self.readings, self.cursor = "confirm", found, [], 0

    def _revise(self, target: int | None, then=frozenset(), stops: tuple[int, ...] = ()) -> None:
        """The tentative last move's token moved on to ``target`` (or back home: None):
        the move is taken back (journalled as an undo) and the new reading judged (with
        the ``stops`` on the way). With ``then``, the other player moved quickly after
        it: the revised move is final."""
        self.tentative = None
        self._write({"kind": "undo"})
        group = self.session.undo()
        back = self._undo_words(group)             # "Green: return 2 buttons; token back to 5"
        self.mismatch = None
        self._to_turn()
        self.notice, self.tip = "", ""
        if target is None:
            self.instruction = back
            return
        turns = len(self.session.groups)
        self._token_moved(target, onto=False, final=bool(then), stops=stops)
        given = back.split("; token back")[0]      # the token moved on: only what to give back
        if len(self.session.groups) > turns:
            self.instruction = f"changed: {self.instruction or 'no buttons'}"
        else:
            self.instruction = ""
        what = given.split(": ", 1)[-1]
        if what not in ("turn undone", "token back"):
            self.tip = f"the rest was no move: {what}"     # e.g. "return 2 buttons"

    def _on_confirm(self, g: Gesture) -> None:
        if g.kind == HOLD:
            if g.button == "back":
                self._drop_question()
            return
        if g.button == "next":
            self.cursor = (self.cursor + 1) % len(self.readings or self.candidates)
        elif g.button == "ok" and self.readings:
            self._play_reading(self.readings[self.cursor])
        elif g.button == "ok":
            self._play(self.candidates[self.cursor])
        elif g.button == "back":
            self.consume_reading = True
            self._to_turn()
            self.notice = f"{self._who(self.state.to_move)}: move the token back"

    def _drop_question(self) -> None:
        """Undo while a question is open: what is undone is the move asked about (never
        recorded), not the turn before it; its token goes back where the game has it."""
        mover = self.state.to_move
        self.consume_reading = True
        self.mismatch = None
        self._to_turn()
        self.notice = self.tip = ""
        self.instruction = (f"{self._who(mover)}: token back to "
                            f"{self.state.players[mover].position}")

    def _on_leather(self, g: Gesture) -> None:
        if g.kind == HOLD and g.button == "back":
            self._undo()
        elif g.kind == PRESS and g.button in ("ok", "next"):
            self._commit([PlaceLeather() if g.button == "ok" else DISCARD])

    def _play(self, action, tentative: bool = False) -> None:
        """Commit ``action`` with what follows by itself; a ``tentative`` move stays open to
        revision until a player acts. (The move that ends the game lands on the other
        token, on the last space, so it is always chosen or answered with OK: final.)"""
        group, state = self._group(action)
        if state is None:
            return
        self._commit(group, tentative)

    def _group(self, action) -> tuple[list, object]:
        """``action`` plus the leather patches it places by itself, and the state after."""
        group = [action]
        state, _ = self._check(group)
        if state is None:
            return group, None
        while state.owed and state.spec.bonus_square:         # Patchwork: placed at once (R9)
            full = state.players[state.owed[0]].empty == 0
            group.append(DISCARD if full else PlaceLeather())  # R10 on a full quilt
            state, _ = self._check(group)
        if state.owed and state.players[state.owed[0]].empty == 0:
            group.append(DISCARD)                               # Express, full quilt: no choice
            state, _ = self._check(group)
        return group, state

    def _check(self, group):
        try:
            return self.session.check(group)
        except IllegalActionError as exc:
            self.notice = f"not allowed: {exc}"
            return None, ()

    def _commit(self, group, tentative: bool = False, box=None) -> bool:
        state, events = self._check(group)
        if state is None:
            return False
        body = {"kind": "turn", "moves": self.session.group_to_json(group)}
        if tentative:
            body["tentative"] = True
        if box is not None:
            body["box"] = self._box_json(box)
        before = self.session.state
        self._write(body)
        events = self._events = self.session.commit(group, box)
        self.tentative = before if tentative else None
        self.notice = ""
        said = intents.notices(events, self.session.setup.seat_names())
        if not all(isinstance(a, (PlaceLeather, DiscardLeather)) for a in group):
            self.tip = ""               # a tip about the last move goes with the next one
        elif not said:
            said = self.instruction     # the move's instruction still stands
        self.instruction = said
        if not self.instruction and isinstance(group[0], Correction):
            buttons = self.state.players[group[0].player].buttons
            self.instruction = f"{self._who(group[0].player)}: {buttons} buttons now"
        self._after_commit()
        return True

    def _after_commit(self) -> None:
        self.mismatch = None
        if self.state.over:
            self._finish()
        else:
            self._to_turn()
            self._explain_grey()

    def _explain_grey(self) -> None:
        """The first time a patch on offer cannot be bought, say once what its
        dotted picture means."""
        state = self.state
        if self.grey_told or state is None or state.to_move is None:
            return
        if any(intents.why_not(state, Buy(pid)) for pid in state.offer[:3]):
            self.grey_told = True
            self.tip = "Dotted picture: can't buy it now"

    def _who(self, player: int | None) -> str:
        """The name of player 0/1 where known ("Anna", "Box"), else the colour ("Green")."""
        return self.session.setup.seat_names()[player or 0]

    def _colour(self, player: int | None) -> str:
        """"Green"/"Yellow" for player 0/1 of the game in progress."""
        return self.session.setup.colours[player or 0].capitalize()

    def _finish(self) -> None:
        self.session.ended = self.wall_time()
        self._write({"kind": "end", "ended": self.session.ended})
        self.mode = "end"
        try:
            self.saved_to = self.on_end(self.session) or ""
        except OSError as exc:
            self.saved_to = ""
            self.warnings["record"] = f"record not saved: {exc.strerror or exc}"

    def _undo(self) -> None:
        if self.session is None or not self.session.groups:
            self.notice = "nothing to undo"
            return
        if self.mode == "end":
            self._write({"kind": "undo"})          # first lift the "end" entry
            self.session.ended = ""
            if not self.state.over:
                self.saved_to = ""
                self._to_turn()
                return
        self._write({"kind": "undo"})
        box = self.session.boxes[-1]
        group = self.session.undo()
        self.tentative = None
        self.consume_reading = True
        self.mismatch = None
        self._box_undone(box)
        self._to_turn()
        self.notice, self.tip = "", ""
        self.instruction = self._undo_words(group)
        if self.mode == "box":                 # its move shows again: say first what to undo
            self.notice = self.instruction

    def _undo_words(self, group) -> str:
        """What to give back for the undone ``group`` (the state is the one before it)."""
        state = self.state
        first = group[0]
        if isinstance(first, Correction):
            return (f"{self._who(first.player)}: buttons back to "
                    f"{state.players[first.player].buttons}")
        try:
            _, events = self.session.check(group)
        except IllegalActionError:
            events = ()
        player = next((e.player for e in events if hasattr(e, "player")), state.to_move)
        return intents.undo_notice(events, state, self.session.setup.seat_names(), player or 0)

    def _write(self, body: dict) -> None:
        self.box_journalled = body.get("kind") == "plan"     # any other entry drops a plan
        try:
            self.journal_write(body)
            self.warnings.pop("journal", None)
        except JournalError as exc:
            self.warnings["journal"] = exc.notice    # "not saving: disk full (/folder)"

    # ----- menu -------------------------------------------------------------------
    def menu_items(self) -> list[str]:
        """The menu's entries for this game (no 7x7 claim in Express or once taken; "Ask the
        box" in a game of two people when the table has the search)."""
        items = list(MENU_ITEMS)
        state = self.state
        if not state.spec.bonus_square or state.special is not None:
            items.remove("Claim 7x7 tile")
        if self.hint_offered():
            items.insert(1, HINT_ITEM)
        return items

    def _on_menu(self, g: Gesture) -> None:
        items = self.menu_items()

        def _ok(i):
            item = items[i]
            if item == "Undo last turn":
                self._undo()
            elif item == "Claim 7x7 tile":
                self.mode = "claim"
            elif item == "Correct buttons":
                self.mode = "correct_who"
            elif item == "End game now":
                self.mode = "end_confirm"
            elif item == HINT_ITEM:
                self._start_hint()
            elif item == "Web PIN":
                self.pin_asked += 1
                self._to_turn()
                self.notice = "PIN asked: see corner"
            else:
                self._to_turn()
        self._choose(g, len(items), _ok, self._to_turn)

    def _on_claim(self, g: Gesture) -> None:
        def _ok(i):
            player = self.session.setup.colours.index((GREEN, YELLOW)[i])
            refusal = self.box_claim_refusal(player)
            if refusal or not self._commit([ClaimSpecialTile(player)]):
                self._to_turn()
                self.notice = refusal or self.notice
        self._choose(g, 2, _ok, self._to_turn)

    def _on_correct_who(self, g: Gesture) -> None:
        def _ok(i):
            self.correct_player = self.session.setup.colours.index((GREEN, YELLOW)[i])
            self.correct_delta, self.mode = 0, "correct_amount"
        self._choose(g, 2, _ok, self._to_turn)

    def _on_correct_amount(self, g: Gesture) -> None:
        buttons = self.state.players[self.correct_player].buttons
        if g.kind == HOLD and g.button == "back":
            self._to_turn()
        elif g.kind != PRESS:
            return
        elif g.button == "next":
            self.correct_delta += 1
        elif g.button == "back":
            self.correct_delta = max(-buttons, self.correct_delta - 1)
        elif g.button == "ok":
            if self.correct_delta and not self._commit([Correction(self.correct_player,
                                                                   self.correct_delta)]):
                return
            self._to_turn()

    def _on_end_confirm(self, g: Gesture) -> None:
        def _ok(i):
            if i == 1:
                self._finish()
            else:
                self._to_turn()
        self._choose(g, 2, _ok, self._to_turn)

    def _on_end(self, g: Gesture) -> None:
        if g.kind == HOLD and g.button == "back":
            self._undo()
        elif g.kind == PRESS and g.button == "ok":
            self.session, self.mode, self.cursor, self.notice = None, "setup_game", 0, ""
            self.instruction = self.tip = ""
            self.choice, self.saved_to = {}, ""

    # ----- for the token watcher ----------------------------------------------------
    def expectation(self) -> Expectation | None:
        """Where the tokens must be and where the mover may go, or None outside play."""
        if self.session is None or self.mode in ("end",):
            return None
        state = self.state
        before = None
        if self.tentative is not None and self.mode in ("turn", "confirm", "leather", "box"):
            before = self._expect_in(self.tentative, None)   # the box's turn: still revisable
        if self.mode == "box" and self.box_move is not None:
            return self._expect_in(state, self.box_expected(), before)
        if self.mode not in ("turn", "confirm") or state.to_move is None:
            return Expectation(_positions(state), None, frozenset(), previous=before)
        return self._expect_in(state, self.armed_action(), before)

    def _expect_in(self, state, chosen, before=None) -> Expectation:
        """The expectation in ``state``: after OK (``chosen``) only its space counts; and
        where the other player could go next after each target (for quick hands)."""
        onward = None
        if chosen is not None and not intents.why_not(state, chosen):
            actions = [chosen]
        else:
            actions = [a for a in intents.legal_set(state) if isinstance(a, (Buy, Advance))]
            onward = _Onward(state)
        mover = state.to_move
        follow: dict[int, frozenset[int]] = {}
        for action in actions:
            target = intents.target_of(state, action)
            spaces = follow.get(target, frozenset())
            after = _after(state, action)
            if not after.over and after.to_move == 1 - mover:
                spaces |= {intents.target_of(after, a) for a in intents.legal_set(after)
                           if isinstance(a, (Buy, Advance))}
            follow[target] = frozenset(spaces)
        return Expectation(_positions(state), mover, frozenset(follow),
                           tuple(sorted(follow.items())), before, onward)


class _Onward:
    """``Expectation.onward`` for ``state``: whether the player to move may have reached
    a space by several turns of their own through stops on the way (see
    :func:`.intents.readings`). Equal for the same state object, so an unchanged
    expectation still compares equal."""

    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state

    def __call__(self, stops: tuple[int, ...], space: int) -> bool:
        return any(len(r) > 1 for r in intents.readings(self.state, stops, space))

    def __eq__(self, other) -> bool:
        return isinstance(other, _Onward) and other.state is self.state

    def __hash__(self) -> int:
        return id(self.state)


_after = intents.after_move


def _positions(state) -> tuple[int, int]:
    return (state.players[0].position, state.players[1].position)


def spec_for(choice: dict):
    """The GameSpec of a (partial) setup choice, for screens."""
    return load_spec(choice["game"], choice.get("time_board"))
