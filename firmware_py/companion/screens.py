"""What the table shows now: the :class:`Screen` and :class:`Lights` values of a
:class:`~.view.TableView` (and the warnings the loop holds)."""
from __future__ import annotations

from ..rules import Buy, load_spec, score, tally
from . import intents
from .badges import badge
from .box_screens import box_review_screen, box_screen, hint_screen
from .model import GREEN, YELLOW, Lights, PatchCard, PlayerLine, Screen
from .table_setup import BOARDS, GAMES, PLAYERS, spec_for
from .view import TableView

LEGEND = "NEXT  OK  BACK"


def player_lines(ui: TableView) -> tuple[PlayerLine, PlayerLine]:
    """Both players' standings, player 0 (who started) first."""
    state = ui.state
    colours = ui.session.setup.colours
    names = ui.session.setup.seat_names()
    out = []
    for i, p in enumerate(state.players):
        out.append(PlayerLine(names[i], colours[i], p.position, p.buttons,
                              p.income, p.empty, state.special == i, score(state, i),
                              state.to_move == i and ui.mode != "end"))
    return tuple(out)


def who(ui: TableView, player: int) -> str:
    """How the screens call player 0/1: the name where known ("Anna", "Box"),
    else the token's colour ("Green")."""
    return ui.session.setup.seat_names()[player]


def _by_colour(ui: TableView) -> list[str]:
    """The green player's and the yellow player's names (the order of the menu's choices)."""
    colours = ui.session.setup.colours
    return [who(ui, colours.index(c)) for c in (GREEN, YELLOW)]


def build_screen(ui: TableView, warnings=()) -> Screen:
    """The OLED screen for the table's current mode (``ui``: its view); ``warnings``: the
    full texts of the warnings standing now (an iterable of str), shown as the badge."""
    builder = _BUILDERS.get(ui.mode, _turn)
    screen = builder(ui)
    if ui.mismatch is not None and ui.mode in ("turn", "confirm", "box"):
        screen = _mismatch(ui)
    warning = badge(warnings)
    if warning:
        screen = Screen(**{**screen.__dict__, "warning": warning})
    return screen


def _choose(title, options, ui, footer="NEXT:other OK:choose") -> Screen:
    return Screen("choose", title, options=tuple(options), selected=max(ui.cursor, 0), footer=footer)


def _setup_game(ui):
    return _choose("Which game?", [name for _, name in GAMES], ui)


def _setup_board(ui):
    return _choose("Time board", [name for _, name in BOARDS], ui)


def _setup_players(ui):
    return _choose("Who plays?", [name for _, name in PLAYERS], ui)


def _setup_first(ui):
    if ui.choice.get("level"):                  # the box always plays yellow
        return _choose("Who starts?", ["You (Green)", "Box (Yellow)"], ui)
    return _choose("Who starts?", ["Green", "Yellow"], ui)


def _setup_names(ui):
    return _choose(f"{ui.naming.capitalize()} player is", ui.name_options, ui)


def _setup_layout(ui):
    return _choose("Patch circle", ["Deal it for me", "Free layout"], ui)


def _deal(ui):
    spec = spec_for(ui.choice)
    circle = ui.choice["circle"]
    card = PatchCard.of(spec, circle[ui.cursor], index=ui.cursor + 1, total=len(circle))
    last = ui.cursor + 1 == len(circle)
    footer = "OK:start game" if last else "NEXT:next BACK:prev"
    title = "Clockwise" if ui.cursor else "After spool"
    return Screen("deal", title, patches=(card,), footer=footer)


def _turn(ui):
    state = ui.state
    spec = state.spec
    legal = intents.legal_set(state)
    chosen = ui.selected()
    name = who(ui, state.to_move)
    notice = ui.notice or ". ".join(t for t in (ui.instruction, ui.tip) if t)
    footer = "NEXT:choose OK:buy"
    if chosen is not None and not isinstance(chosen, Buy):     # in the legend: one display page
        footer = f"NEXT:choose OK:advance to {intents.target_of(state, chosen)}"
    lines = ()
    if state.free:                  # any patch left: the one chosen, numbered, alone
        left = state.offer
        if isinstance(chosen, Buy) and chosen.patch in left:
            at = left.index(chosen.patch)
            cards = (PatchCard.of(spec, chosen.patch, selected=True, buyable=chosen in legal,
                                  index=at + 1, total=len(left)),)
        else:
            cards = ()
            lines = (f"NEXT: which patch ({len(left)} left)",) if left else ("no patches left",)
    else:
        cards = tuple(PatchCard.of(spec, pid, selected=(chosen == Buy(pid)),
                                   buyable=Buy(pid) in legal)
                      for pid in state.offer[:3])
    return Screen("turn", f"{name}'s turn", lines=lines, patches=cards, players=player_lines(ui),
                  notice=notice, footer=footer)


def _confirm(ui):
    """"Which move?" (or, about readings of several moves, :func:`_readings`): the line
    says whose token on which space ("Green on 42:"), each option names the patch's
    place counting clockwise from the neutral token ("2nd patch, cost 3"); ``patches``
    holds the buy options' pictures (``index`` = that place, the cursor's one
    ``selected``), so patches alike in price tell apart as on the table."""
    if ui.readings:
        return _readings(ui)
    state = ui.state
    targets = {intents.target_of(state, a) for a in ui.candidates}
    options = tuple(intents.option_label(a, state, len(targets) > 1) for a in ui.candidates)
    cards = tuple(PatchCard.of(state.spec, a.patch, selected=(i == ui.cursor),
                               index=intents.place_of(state, a), total=len(state.offer[:3]))
                  for i, a in enumerate(ui.candidates) if isinstance(a, Buy))
    line = f"{who(ui, state.to_move)} on " + " or ".join(str(t) for t in sorted(targets)) + ":"
    return Screen("prompt", "Which move?", lines=(line,), options=options, patches=cards,
                  selected=ui.cursor, footer="OK:YES NEXT:OTHER BACK:NO")


def _readings(ui):
    """"1 move or 2?" ("Which moves?" for longer readings): the token stopped on the
    way, so it may have made one move or several of the same player. The line spells
    out the selected reading ("Yellow: 2nd patch at 1, then advance to 4?", "Yellow,
    one move: advance to 4?"); each option is one reading in short ("2nd then
    advance", "advance only"); ``patches`` holds the pictures of every reading's
    patches (``index``: the place each had when bought), those of the selected one
    ``selected``, in order."""
    state = ui.state
    name = who(ui, state.to_move)
    cards = []
    for i, reading in enumerate(ui.readings):
        cards += [PatchCard.of(state.spec, a.patch, selected=(i == ui.cursor),
                               index=intents.place_of(s, a), total=len(s.offer[:3]))
                  for s, a in intents.reading_steps(state, reading) if isinstance(a, Buy)]
    said = intents.reading_words(state, ui.readings[ui.cursor])
    line = f"{name}: {said}?" if len(ui.readings[ui.cursor]) > 1 else f"{name}, {said}?"
    lengths = {len(r) for r in ui.readings}
    title = "1 move or 2?" if lengths == {1, 2} else "Which moves?"
    options = tuple(intents.reading_label(state, r) for r in ui.readings)
    return Screen("prompt", title, lines=(line,), options=options, patches=tuple(cards),
                  selected=ui.cursor, footer="OK:YES NEXT:OTHER BACK:NO")


def _leather(ui):
    return Screen("prompt", "Leather patch",
                  lines=(f"{who(ui, ui.state.owed[0])} won it.", "Place it on the quilt", "or set it aside?"),
                  footer="OK:PLACE  NEXT:SET ASIDE")


def _menu(ui):
    return _choose("Menu", ui.menu, ui, footer="NEXT:other OK:do BACK:close")


def _claim(ui):
    return _choose("Who has a 7x7?", _by_colour(ui), ui)


def _correct_who(ui):
    return _choose("Whose buttons?", _by_colour(ui), ui)


def _correct_amount(ui):
    player = ui.state.players[ui.correct_player]
    new = player.buttons + ui.correct_delta
    return Screen("prompt", f"{who(ui, ui.correct_player)}'s buttons", lines=(f"{player.buttons} -> {new} buttons",),
                  footer="NEXT:+1 BACK:-1 OK:set")


def _end_confirm(ui):
    return _choose("End the game now?", ["No, play on", "Yes, end and save"], ui)


def _mismatch(ui):
    v = ui.mismatch
    state = ui.state
    lines = []
    for space in sorted(v.expected):
        there = [i for i, p in enumerate(state.players) if p.position == space]
        names = " and ".join(who(ui, i) for i in there)
        if state.to_move in there:
            lines.append(f"Put {names} on {space}.")
        else:
            lines += [f"{names}'s token belongs", f"on {space}: put it there."]
    for space in sorted(v.wrong):
        lines.append(f"Nothing belongs on {space}.")
    return Screen("mismatch", "CHECK BOARD", lines=tuple(lines), footer="FIX THE BOARD TO GO ON")


def _end(ui):
    """The final tally: per-player rows come from ``players``; the title says who won."""
    result = tally(ui.state)
    if result.winner is None:
        title, lines = "Game ended early", ("Scores as they stand.",)
    elif result.tie_break:
        winner = who(ui, result.winner)
        title = f"{winner} wins the tie"
        lines = (f"Tie: {winner} got to the last space first.",)
    else:
        title = f"{who(ui, result.winner)} wins"
        lines = ()
    if ui.instruction:              # what the last move asks is still to be done
        lines = (ui.instruction,) + lines
    if ui.saved_to and not lines:
        lines = ("Game saved.",)
    return Screen("end", title, lines=lines, players=player_lines(ui), footer="OK:new game")


_BUILDERS = {"setup_game": _setup_game, "setup_board": _setup_board,
             "setup_players": _setup_players, "setup_first": _setup_first,
             "box": box_screen, "box_review": box_review_screen, "hint": hint_screen,
             "setup_names": _setup_names, "setup_layout": _setup_layout, "deal": _deal, "turn": _turn, "confirm": _confirm,
             "leather": _leather, "menu": _menu, "claim": _claim, "correct_who": _correct_who,
             "correct_amount": _correct_amount, "end_confirm": _end_confirm, "end": _end}


def build_lights(ui: TableView) -> Lights:
    """What the LED strip shows for the table's current mode (``ui``: its view)."""
    if ui.session is None:
        spec = load_spec(ui.choice.get("game", "patchwork"), ui.choice.get("time_board"))
        return Lights(spec.last_space, income=frozenset(spec.income_spaces))
    state = ui.state
    colours = ui.session.setup.colours
    tokens = tuple((colours[i], p.position) for i, p in enumerate(state.players))
    mover = state.to_move
    active = colours[mover] if mover is not None and ui.mode != "end" else ""
    targets = frozenset()
    chosen = ui.selected() if ui.mode == "turn" else None
    if ui.mode == "box":
        chosen = ui.box.expected
    if chosen is not None and not intents.why_not(state, chosen):
        targets = frozenset((intents.target_of(state, chosen),))
    guide = ui.mismatch or ui.guide
    celebrate = ""
    if ui.mode == "end" and state.over:
        celebrate = colours[tally(state).winner]
    return Lights(state.spec.last_space, tokens, active, targets,
                  guide.expected if guide else frozenset(), guide.wrong if guide else frozenset(),
                  frozenset(state.leather), frozenset(state.spec.income_spaces), celebrate)


__all__ = ["build_screen", "build_lights", "player_lines", "GREEN", "YELLOW", "LEGEND"]
