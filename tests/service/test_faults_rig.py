"""The rig the fault tests share, and its own checks.

* :class:`StepClock` and :class:`TableDriver` play a game record through a real
  :class:`~firmware_py.service.loop.Service` (real journal in a folder, no
  hardware): button edges and sensor readings are *posted* exactly as the
  gpiozero callbacks and the sensor link post them, and time is stepped, so a
  whole game takes well under a second and is deterministic. The driver is
  stateless between runs: it reads what the companion shows and does the next
  thing a player would, so it carries on after a power cut. Where the
  physical tokens stand ("the world") is kept in a small file, because a
  power cut of the companion does not move them.
* :func:`start_table` starts the whole companion on the sim backend (mock
  pins, real neopixel/luma drivers, the simulated sensor process on a pty),
  like ``app.start_companion`` but with a chosen list of sensor ports, and
  with a game already set up through the journal so no test pages through the
  deal.
* :func:`wait_until` polls with a deadline (no bare sleeps in the tests).

This module is also run as a script by ``test_faults_powercut.py`` (the child
that is killed); it therefore does not import pytest.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

from firmware_py.service.assembly import Companion
from firmware_py.companion import intents
from firmware_py.companion.journal import Journal
from firmware_py.companion.model import GREEN, YELLOW
from firmware_py.companion.session import Setup
from firmware_py.companion.table_setup import GAMES
from firmware_py.config import validate
from firmware_py.hw.backends import Parts, build_parts
from firmware_py.hw.parts import RawButton
from firmware_py.hw.sensor_link import SensorLink, SensorOccupancy
from firmware_py.rules import ADVANCE, Buy, GameRecord, parse_record, replay, untracked_copy
from firmware_py.service.loop import Service

TESTS = Path(__file__).resolve().parents[1]
GOLDEN_RECORDS = [parse_record(line) for line in
                  (TESTS / "data" / "engine-selfplay.jsonl").read_text().splitlines() if line.strip()]
EXPRESS_RECORD = parse_record((TESTS / "data" / "express-game.json").read_text())

FAST = {"buttons": {"hold_seconds": 0.5, "debounce_ms": 20},
        "sensor": {"stable_ms": 60, "guidance_seconds": 1.0}}


def fast_config(**sections) -> dict:
    """A validated sim config with quick timings; ``sections`` override whole keys by section."""
    data: dict = {"backend": "sim"}
    for section, values in list(FAST.items()) + list(sections.items()):
        data.setdefault(section, {}).update(values)
    return validate(data, "fault-test")


def wait_until(predicate: Callable[[], object], what: str, timeout: float = 5.0,
               every: float = 0.005):
    """Poll ``predicate`` until it returns something truthy (returned); AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


class StepClock:
    """A monotonic clock the test steps by hand (seconds)."""

    def __init__(self, start: float = 1000.0):
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        """Move time on by ``dt`` seconds."""
        self.t += dt


class DriverError(AssertionError):
    """The companion did not do what a player at the table would expect."""


class TableDriver:
    """Plays ``record`` through a running ``service`` on a :class:`StepClock`.

    ``world_path``: a JSON file with the physical token spaces (by player),
    written before a token moves, read at start (None: tokens start where the
    companion says). ``on_progress(view)`` is called whenever the companion
    accepted something (a new game or a turn), after it did.
    """

    def __init__(self, service: Service, clock: StepClock, record: GameRecord,
                 world_path: str | Path | None = None, on_progress: Callable | None = None):
        self.service = service
        self.clock = clock
        self.record = record
        self.plan = list(untracked_copy(record).moves)
        self.world_path = Path(world_path) if world_path else None
        self.world = self._load_world()
        self.on_progress = on_progress
        self.inputs = 0
        self._seq = 0
        cfg = service.cfg
        self.hold_s = cfg["buttons"]["hold_seconds"]
        self.stable_s = cfg["sensor"]["stable_ms"] / 1000

    # ----- the table's inputs ------------------------------------------------------------
    def settle(self) -> None:
        """Let the loop handle everything posted so far and run its timers once."""
        self.service.call(lambda: None)
        self.service.call(lambda: None)

    def later(self, dt: float) -> None:
        """Step the clock by ``dt`` and let the loop see it."""
        self.clock.advance(dt)
        self.settle()

    def edge(self, button: str, pressed: bool) -> None:
        """One raw edge, as the gpiozero callback posts it."""
        self.service.post(RawButton(button, pressed, self.clock()))

    def press(self, button: str) -> None:
        """A short press of ``button``."""
        self.inputs += 1
        self.edge(button, True)
        self.later(0.03)
        self.edge(button, False)
        self.later(0.03)

    def hold(self, button: str) -> None:
        """A hold of ``button``."""
        self.inputs += 1
        self.edge(button, True)
        self.later(self.hold_s + 0.05)
        self.edge(button, False)
        self.later(0.03)

    def reading(self, spaces, dwell: float) -> None:
        """Post an occupancy reading, as the sensor link posts it, and let ``dwell`` seconds pass."""
        self._seq = (self._seq + 1) % 65536
        self.service.post(SensorOccupancy(frozenset(spaces), self._seq, False, self.clock()))
        self.later(dwell)

    # ----- what the companion shows --------------------------------------------------------
    def view(self) -> SimpleNamespace:
        """The UI as the loop sees it now."""
        def grab():
            ui = self.service.view
            session = ui.session
            return SimpleNamespace(
                mode=ui.mode, cursor=ui.cursor, session=session is not None,
                groups=len(session.groups) if session else 0,
                moves=list(session.record().moves) if session else [],
                state=ui.state, candidates=list(ui.candidates), intent=ui.intent, armed=ui.armed,
                saved_to=ui.saved_to, colours=session.setup.colours if session else None,
                circle=tuple(session.setup.circle) if session else None,
                menu=ui.menu if session is not None and ui.mode == "menu" else [])
        return self.service.call(grab)

    # ----- the world -----------------------------------------------------------------------
    def _load_world(self) -> list[int] | None:
        if self.world_path is None:
            return None
        try:
            return json.loads(self.world_path.read_text())
        except FileNotFoundError:
            return None

    def forget_world(self) -> None:
        """The tokens stand where the companion says (a new game starts)."""
        self.world = None
        if self.world_path is not None:
            self.world_path.unlink(missing_ok=True)

    def _save_world(self, world: list[int]) -> None:
        self.world = list(world)
        if self.world_path is not None:
            tmp = self.world_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(world))
            os.replace(tmp, self.world_path)

    # ----- playing -------------------------------------------------------------------------
    def check_prefix(self, view: SimpleNamespace) -> None:
        """The companion's game must be a prefix of the record (never a move twice or out of order)."""
        if view.moves != self.plan[:len(view.moves)]:
            raise DriverError(f"the companion holds {view.moves}, not a prefix of the record")

    def play(self, max_inputs: int = 4000, stop_when: Callable | None = None) -> SimpleNamespace:
        """Play until the end screen (or until ``stop_when(view)``); returns the last view."""
        last = self.view()
        self.check_prefix(last)
        stuck = 0
        while last.mode != "end" and not (stop_when and stop_when(last)):
            if self.inputs > max_inputs or stuck > 12:
                raise DriverError(f"no progress in mode {last.mode!r} after {self.inputs} inputs")
            self.step(last)
            now = self.view()
            if (now.session, now.groups) != (last.session, last.groups):
                self.check_prefix(now)
                if self.on_progress is not None:
                    self.on_progress(now)
            same = (now.mode, now.cursor, now.groups, now.intent, now.armed) == \
                (last.mode, last.cursor, last.groups, last.intent, last.armed)
            stuck = stuck + 1 if same else 0
            last = now
        return last

    def _choose(self, view, want: int) -> None:
        self.press("ok" if view.cursor == want else "next")

    def step(self, v: SimpleNamespace) -> None:
        """Give the one input a player would give now."""
        rec = self.record
        first = YELLOW if rec.players[0].lower() == YELLOW else GREEN
        if v.mode.startswith("setup") or v.mode == "deal":
            self.forget_world()                 # a new game: the tokens go back to the start
        if v.mode == "setup_game":
            self._choose(v, [g for g, _ in GAMES].index(rec.game))
        elif v.mode == "setup_board":
            self._choose(v, ["2014", "revised"].index(rec.time_board))
        elif v.mode == "setup_players":
            self._choose(v, 0)                  # two players
        elif v.mode == "setup_first":
            self._choose(v, [GREEN, YELLOW].index(first))
        elif v.mode == "setup_layout":
            self._choose(v, 0)
        elif v.mode == "deal":
            self.press("ok")
        elif v.mode == "turn":
            self._turn(v)
        elif v.mode == "confirm":
            want = self._action(self.plan[len(v.moves)])
            if want not in v.candidates:
                raise DriverError(f"confirm offers {v.candidates}, the record wants {want}")
            self.press("ok" if v.candidates[v.cursor] == want else "next")
        elif v.mode == "leather":
            self.press("next" if self.plan[len(v.moves)] == {"leather": "discard"} else "ok")
        elif v.mode == "menu":
            self._choose(v, v.menu.index("Claim 7x7 tile"))
        elif v.mode == "claim":
            player = self.plan[len(v.moves)]["bonus"]
            self._choose(v, [GREEN, YELLOW].index(v.colours[player]))
        else:
            self.press("back")

    @staticmethod
    def _action(move):
        return ADVANCE if move == "advance" else Buy(move["buy"])

    def _turn(self, v: SimpleNamespace) -> None:
        index = len(v.moves)
        move = self.plan[index]
        state = v.state
        if isinstance(move, dict) and "bonus" in move:
            self.hold("ok")
            return
        action = self._action(move)
        mover = state.to_move
        target = intents.target_of(state, action)
        world = self.world or [p.position for p in state.players]
        if world[mover] == target:              # moved already (before a power cut): show it
            self.reading(set(world), self.stable_s + 0.02)
            self.settle()
            return
        if index % 2 == 0:                      # choose with NEXT and OK, then move
            if v.intent != action:
                self.press("next")
                return
            if not v.armed:
                self.press("ok")
                return
        self.move_token(mover, world, target, "lift" if index % 3 == 2 else "slide")

    def move_token(self, mover: int, world: list[int], target: int, style: str) -> None:
        """Move the mover's token from where the world has it to ``target`` (slide or lift)."""
        new = list(world)
        new[mover] = target
        self._save_world(new)                   # the hand moves it, whatever the companion does
        start, other = world[mover], world[1 - mover]
        if style == "slide":
            step = 1 if target >= start else -1
            for space in range(start + step, target + step, step):
                self.reading({space - step, space, other}, 0.01)
                self.reading({space, other}, 0.01)
        else:
            self.reading({other}, 0.02)
        self.reading({target, other}, self.stable_s + 0.02)
        self.settle()


def service_for(folder: str | Path, record: GameRecord, clock: StepClock | None = None,
                parts: Parts | None = None, deal: Callable | None = None) -> Service:
    """A started Service (no hardware unless ``parts``) on ``folder`` dealing ``record``'s
    circle (or what ``deal(game)`` returns)."""
    return Service(fast_config(), parts or Parts(), folder, clock=clock or StepClock(),
                   deal=deal or (lambda game: (record.circle, record.blue or ()))).start()


def expected_result(record: GameRecord):
    """The record's result as replayed by the engine."""
    return replay(record)[1]


# ----------------------------------------------------------------- the whole companion
def setup_journal(folder: str | Path, record: GameRecord, turns: int = 0) -> None:
    """Write a journal holding ``record``'s setup and its first ``turns`` record moves,
    as the companion would have (so the companion resumes straight into play)."""
    from firmware_py.companion.session import Session
    first = YELLOW if record.players[0].lower() == YELLOW else GREEN
    setup = Setup(record.game, record.time_board, first, tuple(record.circle),
                  tuple(record.blue or ()), False)
    journal = Journal(folder)
    journal.load()
    journal.append({"kind": "setup", "setup": setup.to_json()})
    session = Session(setup)
    for move in untracked_copy(record).moves[:turns]:
        group = session.group_from_json([move])
        journal.append({"kind": "turn", "moves": session.group_to_json(group)})
        session.commit(group)


def start_table(tmp_path: Path, record: GameRecord | None = None, *, turns: int = 0,
                ports: list[str] | None = None, cfg: dict | None = None, set_up: bool = True,
                on_oled_frame=None, on_led_frame=None) -> Companion:
    """The whole companion on the sim backend, its journal in ``tmp_path/journal``.

    The simulated sensor's pty link is ``tmp_path/sensor-a``; ``ports`` (default:
    that link) is what the sensor link opens, as ``sensor.ports`` does on a Pi.
    With ``set_up`` the game of ``record`` (default: the first golden game) is
    already set up (plus ``turns`` moves) and both tokens stand where the game
    says, seen by the companion.
    """
    record = record or GOLDEN_RECORDS[0]
    cfg = cfg or fast_config(sim={"sensor_link": str(tmp_path / "sensor-a"), "speed": 4.0})
    folder = tmp_path / "journal"
    if set_up:
        setup_journal(folder, record, turns)
    holder: dict = {}
    parts = build_parts(cfg, lambda e: holder["service"].post(e), time.monotonic,
                        on_oled_frame=on_oled_frame, on_led_frame=on_led_frame)
    service = Service(cfg, parts, folder, deal=lambda game: (record.circle, record.blue or ()))
    holder["service"] = service
    service.sensor_status(False, "sensor: connecting")
    service.start()
    link = SensorLink(ports or parts.sensor_ports, cfg["sensor"]["baud"], service.post,
                      time.monotonic)
    link.start()
    companion = Companion(service, parts, link)
    if set_up and parts.sim_sensor is not None:
        state = service.call(lambda: service.view.state)
        place(companion, [p.position for p in state.players])
    return companion


def place(companion: Companion, spaces: list[int]) -> None:
    """Put both tokens on ``spaces`` and wait until the companion has judged that board."""
    sim = companion.parts.sim_sensor
    sim.command("reset", tokens=list(spaces))
    sim.sync()
    board_seen(companion, set(spaces))


def board_seen(companion: Companion, spaces, timeout: float = 5.0) -> None:
    """Wait until the companion has seen ``spaces`` occupied for longer than the stable time."""
    service = companion.service
    watch = service.watch
    want = frozenset(spaces)

    def seen():
        occupied, since = service.call(lambda: (watch.occupied, watch.since))
        return occupied == want and service.clock() - since > watch.stable_s + 0.03

    wait_until(seen, f"the companion to see tokens on {sorted(want)}", timeout)
    service.call(lambda: None)


def game_view(service: Service) -> tuple:
    """(turns accepted, record moves so far, mode) as the loop sees them now."""
    return service.call(lambda: (len(service.view.session.groups), list(service.view.session.record().moves),
                                 service.view.mode))


# ----------------------------------------------------------------- the power-cut child
class KillHooks:
    """Counts the disk operations of the journal, the record writer and the history index
    (each ``write``, ``fsync`` and ``replace``, and the index commit, before and after)
    and SIGKILLs this process at operation ``kill_op`` (0: never). With ``scope``
    "filing" only the operations of moving a finished game into the history count. A
    write it kills is torn first: only ``kill_byte`` bytes of it reach the file
    ("torn"), or as many NUL bytes ("nul", what an SD card may leave after a power cut)."""

    def __init__(self, kill_op: int = 0, kill_byte: int = 0, mode: str = "torn",
                 scope: str = "all"):
        self.kill_op, self.kill_byte, self.mode = kill_op, kill_byte, mode
        self.ops = self.filing_ops = 0
        self.scope = scope
        self.filing = False

    def install(self) -> None:
        """Route the journal's and the service's ``open`` and ``os`` through the hooks, and
        mark the history's filing and index commits."""
        import builtins

        import firmware_py.companion.journal as journal_module
        import firmware_py.disk as disk_module
        import firmware_py.service.loop as service_module
        import firmware_py.store.history as history_module
        hooks = self

        def hooked_open(file, mode="r", *args, **kwargs):
            fh = builtins.open(file, mode, *args, **kwargs)
            return _KillFile(fh, hooks) if ("w" in mode or "a" in mode) else fh

        for module in (journal_module, service_module, disk_module):
            module.open = hooked_open
            module.os = _KillOs(hooks)
        history = history_module.History
        for name in ("save", "file", "ensure", "index_record"):
            setattr(history, name, self._filing(getattr(history, name)))
        index_class = history_module.Index

        class KillIndex(index_class):
            def upsert(self, *args, **kwargs):
                if hooks.due():
                    hooks.die()
                super().upsert(*args, **kwargs)
                if hooks.due():
                    hooks.die()
        history_module.Index = KillIndex

    def _filing(self, method):
        hooks = self

        def filing(*args, **kwargs):
            outer, hooks.filing = hooks.filing, True
            try:
                return method(*args, **kwargs)
            finally:
                hooks.filing = outer
        return filing

    def due(self) -> bool:
        """Count one operation; True when it is the one to die at."""
        self.ops += 1
        self.filing_ops += self.filing
        counted = self.ops if self.scope == "all" else (self.filing_ops if self.filing else -1)
        return counted == self.kill_op

    def die(self) -> None:
        """The power cut."""
        os.kill(os.getpid(), 9)
        time.sleep(60)


class _KillFile:
    def __init__(self, fh, hooks: KillHooks):
        self._fh, self._hooks = fh, hooks

    def write(self, data: bytes) -> int:
        if self._hooks.due():
            cut = self._hooks.kill_byte % (len(data) + 1)
            self._fh.write(data[:cut] if self._hooks.mode == "torn" else b"\0" * cut)
            self._fh.flush()
            self._hooks.die()
        return self._fh.write(data)

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


class _KillOs:
    def __init__(self, hooks: KillHooks):
        self._hooks = hooks

    def __getattr__(self, name):
        return getattr(os, name)

    def fsync(self, fd):
        if self._hooks.due():
            self._hooks.die()
        return os.fsync(fd)

    def write(self, fd, data) -> int:
        """``os.write`` of the durable-write helper: torn (or NUL-filled) when it is the one."""
        if self._hooks.due():
            cut = self._hooks.kill_byte % (len(data) + 1)
            os.write(fd, bytes(data[:cut]) if self._hooks.mode == "torn" else b"\0" * cut)
            self._hooks.die()
        return os.write(fd, data)

    def replace(self, src, dst):
        if self._hooks.due():
            self._hooks.die()
        return os.replace(src, dst)


def emit(kind: str, **fields) -> None:
    """One JSON line for the parent on stdout."""
    print(json.dumps({"kind": kind, **fields}), flush=True)


def game_index(records: list[GameRecord], circle) -> int | None:
    """Which of ``records`` has this circle (each game of a run has its own), or None."""
    if circle is None:
        return None
    return next((i for i, r in enumerate(records) if tuple(r.circle) == tuple(circle)), -1)


def filed_games(folder: Path, records: list[GameRecord]) -> dict:
    """The history as it is on disk: index rows and record files, by game index."""
    from firmware_py.store import History
    history = History(folder)
    rows, files = [], []
    if history.db_path.exists():
        with history.index() as index:
            rows = [r["record"] for r in index.games(limit=1000)]
    if history.records.is_dir():
        files = sorted(p.name for p in history.records.glob("*.json"))
    games = [game_index(records, parse_record((history.records / name).read_text()).circle)
             for name in rows]
    return {"rows": len(rows), "files": len(files), "games": games,
            "unindexed": sorted(set(files) - set(rows))}


def powercut_child(argv: list[str]) -> int:
    """The process the power-cut test kills: resume the games in ``--folder`` and play the
    ``--record`` files one after the other to the end of the last, acknowledging each
    accepted step (game, turns, ended) in ``acks.jsonl``.

    Prints ``ready`` (what was resumed, journal problems, the history on disk) once the
    service runs, and ``done`` (each game's tally, the history, operations counted)
    after the last game.
    """
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", required=True, nargs="+")
    parser.add_argument("--folder", required=True)
    parser.add_argument("--kill-op", type=int, default=0)
    parser.add_argument("--kill-byte", type=int, default=0)
    parser.add_argument("--kill-mode", default="torn")
    parser.add_argument("--kill-scope", default="all", choices=("all", "filing"))
    args = parser.parse_args(argv)
    records = [parse_record(Path(r).read_text()) for r in args.record]
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    hooks = KillHooks(args.kill_op, args.kill_byte, args.kill_mode, args.kill_scope)
    hooks.install()
    acks = open(folder / "acks.jsonl", "a")

    def ack(view):
        acks.write(json.dumps({"game": game_index(records, view.circle), "groups": view.groups,
                               "ended": view.mode == "end"}) + "\n")
        acks.flush()

    clock = StepClock()
    started = time.monotonic()
    current = {"record": records[0]}
    service = service_for(folder / "journal", records[0], clock,
                          deal=lambda game: (current["record"].circle, current["record"].blue or ()))
    driver = TableDriver(service, clock, records[0], folder / "world.json", on_progress=ack)
    view = driver.view()
    service.keeper.indexer.wait_idle(60)        # the index thread's start-up check
    game = game_index(records, view.circle)
    plan = list(untracked_copy(records[game]).moves) if game not in (None, -1) else []
    prefix_ok = game != -1 and view.moves == plan[:len(view.moves)]
    emit("ready", game=game, session=view.session, groups=view.groups, moves=len(view.moves),
         prefix_ok=prefix_ok, problems=service.problems, mode=view.mode,
         history=filed_games(folder / "journal", records))
    if not prefix_ok:
        return 3
    ack(view)                                   # what the players see on the screen now
    ready = time.monotonic()
    results = []
    while True:
        view = driver.view()
        game = game_index(records, view.circle)
        if game is None:
            service.keeper.indexer.wait_idle(60)
            game = filed_games(folder / "journal", records)["rows"]
        if view.mode == "end":
            results.append(_result(service, view))
            if game == len(records) - 1:
                break
            driver.press("ok")                  # leave the end screen: the next game
            continue
        current["record"] = records[game]
        driver = TableDriver(service, clock, records[game], folder / "world.json",
                             on_progress=ack)
        driver.play()
    service.keeper.indexer.wait_idle(60)
    emit("done", results=results, history=filed_games(folder / "journal", records),
         ops=hooks.ops, filing_ops=hooks.filing_ops, seconds=time.monotonic() - ready,
         startup=ready - started,
         leftovers=sorted(str(p) for p in (folder / "journal").rglob("*.tmp")))
    service.stop()
    return 0


def _result(service: Service, view) -> dict:
    from firmware_py.rules import tally
    result = tally(view.state)
    return {"scores": list(result.scores), "winner": result.winner, "groups": view.groups,
            "moves": view.moves, "saved_to": view.saved_to, "circle": list(view.circle)}


# ------------------------------------------------------------------ the rig's own checks
def test_the_driver_plays_whole_games_with_the_real_journal(tmp_path):
    """The stepped driver follows a Patchwork and an Express game to the recorded tally,
    and a second service resumed from that journal shows the same ended game."""
    for n, record in enumerate((GOLDEN_RECORDS[3], EXPRESS_RECORD)):
        folder = tmp_path / f"game{n}"
        clock = StepClock()
        service = service_for(folder, record, clock)
        try:
            final = TableDriver(service, clock, record).play()
        finally:
            service.stop()
        expected = expected_result(record)
        assert final.moves == list(untracked_copy(record).moves)
        assert replay(parse_record(Path(final.saved_to).read_text()))[1].scores == expected.scores
        again = service_for(folder, record)
        try:
            view = TableDriver(again, again.clock, record).view()
        finally:
            again.stop()
        assert view.mode == "end" and view.moves == final.moves and view.saved_to == final.saved_to


if __name__ == "__main__":
    import sys
    sys.exit(powercut_child(sys.argv[1:]))
