"""Start the companion on simulated hardware in the middle of a real game."""
from __future__ import annotations

import threading

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

    setup, turn_groups = groups(record, turns)
    setup = replace(setup, names=tuple(names), free=free)
    session = Session(setup)
    entries = [{"kind": "setup", "setup": setup.to_json()}]
    for group in turn_groups:
        entries.append({"kind": "turn", "moves": session.group_to_json(group)})
        session.commit(group)
    ui = TableRig(lambda body: 0, lambda game: ((), ()), lambda s: "")
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
        self.ui = LiveView(self.service)
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


class TableRig:
    """A table (``companion.table.Table``) without the service, for tests: its inputs
    return effects, which the rig carries out as the loop would, into the callables
    given: ``journal_write(body)`` (may raise JournalError: then a "journal" warning),
    ``deal(game)``, ``on_end(game)`` (returns where the record went), ``wall_time()``
    and ``think(request)`` (None: no search on this table). ``known_names()`` gives the
    stored names. Reading an attribute reads the table's view (``rig.mode`` is
    ``table.view().mode``); ``warnings`` are the rig's, as the loop's are."""

    def __init__(self, journal_write, deal, on_end, wall_time=None, think=None):
        from firmware_py.companion.session import now_text
        from firmware_py.companion.table import Table
        self.table = Table(deal, can_think=think is not None)
        self.journal_write, self.on_end, self.think = journal_write, on_end, think
        self.wall_time = wall_time or now_text
        self.known_names = list
        self.warnings: dict[str, str] = {}
        self.forgotten = 0          # how often the table said the board as it is makes no move

    def __getattr__(self, name):
        return getattr(self.table.view(), name)

    def view(self):
        """The table's view now."""
        return self.table.view()

    def gesture(self, g) -> None:
        """A button gesture, its effects carried out."""
        names = tuple(self.known_names()) if self.table.view().asks_names else ()
        self._carry_out(self.table.gesture(g, self.wall_time(), names))

    def verdict(self, v) -> None:
        """A token verdict, its effects carried out."""
        self._carry_out(self.table.verdict(v, self.wall_time()))

    def box_answer(self, key, answer) -> None:
        """The box's answer, its effects carried out."""
        self._carry_out(self.table.box_answer(key, answer))

    def resume(self, entries) -> None:
        """Resume from journal entries, the effects carried out."""
        self._carry_out(self.table.resume(entries))

    def sensor_status(self, online: bool, text: str = "") -> None:
        """The sensor online or not, as the loop says it (a "sensor" warning while offline)."""
        if online:
            self.warnings.pop("sensor", None)
        else:
            self.warnings["sensor"] = text or "sensor offline"
        self.table.sensor_status(online)

    def _carry_out(self, effects) -> None:
        from firmware_py.companion.effects import AskBox, ForgetReading, Journal, SaveRecord
        from firmware_py.companion.journal import JournalError
        for effect in effects:
            if isinstance(effect, Journal):
                try:
                    self.journal_write(effect.body)
                    self.warnings.pop("journal", None)
                except JournalError as exc:
                    self.warnings["journal"] = exc.notice
            elif isinstance(effect, SaveRecord):
                try:
                    saved = self.on_end(effect.game) or ""
                except OSError as exc:
                    saved = ""
                    self.warnings["record"] = f"record not saved: {exc.strerror or exc}"
                self.table.record_saved(saved)
            elif isinstance(effect, AskBox):
                if self.think is not None:
                    self.think(effect.request)
            elif isinstance(effect, ForgetReading):
                self.forgotten += 1


def view_of(service):
    """The view of a service's table now: taken on its loop thread while the loop runs,
    else (a stepped service) directly."""
    thread = service._thread
    if thread is not None and thread.is_alive() and threading.current_thread() is not thread:
        return service.call(lambda: service.view)
    return service.view


class LiveView:
    """The view of a service's table, read afresh at every attribute: ``live.mode`` is
    ``view_of(service).mode``."""

    def __init__(self, service):
        self.service = service

    def __getattr__(self, name):
        return getattr(view_of(self.service), name)


class ServiceTable(LiveView):
    """A running service's table driven as a :class:`TableRig` is (on the loop thread, e.g.
    inside ``service.call``): gestures and verdicts go to the table through the loop,
    which carries out their effects."""

    def view(self):
        """The table's view now."""
        return view_of(self.service)

    @property
    def warnings(self) -> dict:
        """The loop's warnings."""
        return self.service.warnings

    def gesture(self, g) -> None:
        """A button gesture, as the buttons would give it."""
        self.service._gesture(g, self.service.clock())

    def verdict(self, v) -> None:
        """A token verdict, as the token watcher would give it."""
        service = self.service
        service._fed(service.table.verdict(v, ""), service.clock())
