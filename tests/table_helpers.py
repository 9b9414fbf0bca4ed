"""Start the companion on simulated hardware in the middle of a real game."""
from __future__ import annotations

from firmware_py.service.assembly import start_companion
from firmware_py.companion.journal import Journal
from firmware_py.companion.session import Session, Setup
from firmware_py.sim.demo import demo_config
from firmware_py.rules import DISCARD, PlaceLeather, move_to_action, parse_record, untracked_copy
from firmware_py.sim.hands import Hands


def groups(record, count: int):
    """The first ``count`` record moves as the turn groups the table would accept."""
    setup = setup_of(record)
    session = Session(setup)
    plan = untracked_copy(record).moves
    out = []
    for index, move in enumerate(plan[:count]):
        group = [move_to_action(session.state.spec, move, index, tracked=False)]
        state, _ = session.check(group)
        while state.owed and state.spec.bonus_square:
            group.append(PlaceLeather() if state.players[state.owed[0]].empty else DISCARD)
            state, _ = session.check(group)
        session.commit(group)
        out.append(group)
        nxt = plan[index + 1] if index + 1 < len(plan) else None
        if state.owed and nxt != {"leather": "discard"} and index + 1 < count:
            session.commit([PlaceLeather()])
            out.append([PlaceLeather()])
    return setup, out


def ui_after(record, turns: int, names: tuple = (), free: bool = False):
    """A table UI (no hardware) resumed ``turns`` turn groups into ``record``, with the
    players' ``names`` (none: their colours) and, with ``free``, a free layout."""
    from dataclasses import replace

    from firmware_py.companion.ui import TableUI
    setup, turn_groups = groups(record, turns)
    setup = replace(setup, names=tuple(names), free=free)
    session = Session(setup)
    entries = [{"kind": "setup", "setup": setup.to_json()}]
    for group in turn_groups:
        entries.append({"kind": "turn", "moves": session.group_to_json(group)})
        session.commit(group)
    ui = TableUI(lambda body: 0, lambda game: ((), ()), lambda s: "")
    ui.resume(entries)
    return ui


def setup_of(record) -> Setup:
    """The table setup of a record (the first player's colour from its name)."""
    first = "yellow" if record.players[0].lower() == "yellow" else "green"
    return Setup(record.game, record.time_board, first, record.circle, record.blue or ())


class Table:
    """A running companion, its hands, and the game it resumed."""

    def __init__(self, folder, record_text: str, prefix: int, **overrides):
        record = parse_record(record_text)
        setup, turns = groups(record, prefix)
        journal = Journal(folder)
        journal.load()
        journal.append({"kind": "setup", "setup": setup.to_json()})
        session = Session(setup)
        for group in turns:
            journal.append({"kind": "turn", "moves": session.group_to_json(group)})
            session.commit(group)
        cfg = demo_config(fast=True)
        for section, values in overrides.items():
            cfg[section].update(values)
        self.companion = start_companion(cfg, folder=folder)
        self.service = self.companion.service
        self.ui = self.service.ui
        self.hands = Hands(self.companion, timeout=10)
        state = self.state
        self.hands.place_tokens([p.position for p in state.players])
        self.hands.await_board({p.position for p in state.players})

    @property
    def state(self):
        """The engine state, read on the loop thread."""
        return self.service.call(lambda: self.ui.state)

    def status(self):
        """The latest published status."""
        return self.service.status

    def close(self) -> None:
        """Stop everything."""
        self.companion.close()
