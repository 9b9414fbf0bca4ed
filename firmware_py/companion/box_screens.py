"""What the OLED shows for the box: its turn to carry out, its last turn again, a hint."""
from __future__ import annotations

from ..rules import (ButtonsEarned, IllegalActionError, IncomePaid, LeatherWon, PatchBought,
                     SpecialTileAwarded, apply)
from .intents import ORDINALS
from .model import PatchCard, QuiltView, Screen
from .opponent import BoxMove
from .view import TableView


def _ordinal(place: int) -> str:
    return ORDINALS[place - 1] if 0 < place <= len(ORDINALS) else f"{place}th"


def _buttons(count: int) -> str:
    return f"{count} button{'s' if count != 1 else ''}"


def todo(events, who: str, target: int) -> list[str]:
    """What a person does for the box after its move's ``events``: pay or take buttons,
    its time token ``who`` ("Yellow") to ``target``, income, leather, the 7x7 tile."""
    lines: list[str] = []
    paid = sum(e.cost for e in events if isinstance(e, PatchBought))
    earned = sum(e.buttons for e in events if isinstance(e, ButtonsEarned))
    income = sum(e.buttons for e in events if isinstance(e, IncomePaid))
    leather = sum(1 for e in events if isinstance(e, LeatherWon))
    if any(isinstance(e, PatchBought) for e in events):
        lines.append(f"pay {_buttons(paid)}" if paid else "pay nothing")
    lines.append(f"{who} to {target}")
    if earned:
        lines.append(f"take {_buttons(earned)}")
    if income:
        lines.append(f"+{income} income")
    if leather:
        lines.append("leather as shown" if leather == 1 else f"{leather} leather as shown")
    if any(isinstance(e, SpecialTileAwarded) for e in events):
        lines.append("take the 7x7 tile")
    return lines


def _events(state, group) -> list:
    """The events of ``group`` applied to ``state`` ([] if the engine refuses it)."""
    events: list = []
    try:
        for action in group:
            state, more = apply(state, action)
            events += more
    except IllegalActionError:
        return []
    return events


def box_turn_screen(state, move: BoxMove, who: str, quilt_before: int, *, done: bool = False,
                    notice: str = "", footer: str = "OK:DONE") -> Screen:
    """The screen of the box's ``move`` in ``state`` (before it), its token's colour ``who``
    and its quilt before the move ``quilt_before`` (bitmask); ``done``: the move was made
    (its title in the past: "Box took: 2nd patch", "Box advanced")."""
    spec = state.spec
    events = _events(state, move.group)
    quilt = None
    if move.patch is not None or move.leather:
        quilt = QuiltView(spec.rows, spec.cols, quilt_before, move.mask,
                          move.squares & ~move.mask)
    lines = todo(events, who, move.target)
    title = "Box took" if done else "Box"
    if move.patch is None:
        head, cards = ("Box advanced" if done else "Box advances"), ()
    elif state.free:                # no neutral token order: the patch by its picture and price
        patch = spec.patches[move.patch]
        head = f"{title}: this patch"
        cards = (PatchCard.of(spec, move.patch, selected=True),)
        lines[0] = f"cost {patch.cost}, time {patch.time}"      # what it pays: its cost
    else:
        head = f"{title}: {_ordinal(move.place)} patch"
        cards = (PatchCard.of(spec, move.patch, selected=True, index=move.place, total=3),)
    return Screen("box", head, lines=tuple(lines), patches=cards, quilt=quilt, notice=notice,
                  footer=footer)


def box_screen(ui: TableView) -> Screen:
    """The ``box`` mode screen: thinking, a problem, or the move to carry out."""
    session = ui.session
    who = session.setup.colours[ui.box.seat].capitalize()
    move = ui.box.move
    if move is None:
        if ui.box.waiting:
            lines = ("Box is thinking...",)
        else:
            lines = ("Box could not decide:", ui.box.problem, "OK: try again")
        if ui.instruction:
            lines += (ui.instruction,)
        return Screen("prompt", "Box's turn", lines=lines, notice=ui.notice)
    quilt = session.box_quilt()
    return box_turn_screen(ui.state, move, who, quilt, notice=ui.notice)


def box_review_screen(ui: TableView) -> Screen:
    """The box's last turn shown again (BACK on the person's turn)."""
    session = ui.session
    move = session.boxes[-1]
    who = session.setup.colours[ui.box.seat].capitalize()
    before = session.previous_state()
    quilt = session.box_quilt() & ~move.squares
    return box_turn_screen(before, move, who, quilt, done=True, footer="ANY BUTTON:BACK")


def hint_screen(ui: TableView) -> Screen:
    """What the box would play for the person to move (a hint in a game of two people)."""
    state = ui.state
    who = ui.session.setup.seat_names()[state.to_move]
    move = ui.box.hint
    if move is None:
        lines = ("Thinking...",) if ui.box.waiting else ("No hint:", ui.box.problem)
        return Screen("prompt", f"Hint for {who}", lines=lines, footer="OK:BACK")
    if move.patch is None:
        gain = move.target - state.players[state.to_move].position
        lines = (f"{who}: advance to {move.target}, take {_buttons(gain)}",)
        cards = ()
    else:
        patch = state.spec.patches[move.patch]
        which = f"the patch costing {patch.cost}, time {patch.time}" if state.free \
            else f"{_ordinal(move.place)} patch, pay {patch.cost}"
        lines = (f"{who}: {which}, to {move.target}",)
        cards = (PatchCard.of(state.spec, move.patch, selected=True, index=move.place,
                              total=3),)
    return Screen("prompt", "Box would play", lines=lines, patches=cards, footer="OK:BACK")
