"""Every output survives any name: a terminal that cannot encode it, control characters and
escape sequences in it, a name a spreadsheet would run as a formula.

Names reach the store from records, backups and the web page's name editor, so
they can hold anything. Each command prints what the terminal can show and
replaces the rest (never a traceback, never exit 1, which ``replay`` keeps for
"result disagrees"); no ESC or BEL from a name reaches the terminal; CSV cells
are neutralised as the club's results file does.
"""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from firmware_py.cli import main
from firmware_py.rules import dumps_record
from firmware_py.store import History
from firmware_py.store.text import csv_text, shown, spreadsheet_cell

from test_faults_rig import EXPRESS_RECORD

ZOE = "Zoë 🧵"
HOSTILE = "=HYPERLINK(\"http://x\")\x1b]0;pwn\x07"
RED = "\x1b[31mRed\x07"
GAME_ZOE, GAME_HOSTILE = "20261201-190400-aaaaaa", "20261201-200400-bbbbbb"


@pytest.fixture
def store(tmp_path) -> Path:
    """A store with two games: Zoë 🧵 against Ann, and two hostile names; plus the same
    games as record files for ``replay``."""
    record = EXPRESS_RECORD
    history = History(tmp_path)
    for game_id, names in ((GAME_ZOE, [ZOE, "Ann"]), (GAME_HOSTILE, [HOSTILE, RED])):
        one = replace(record, players=names, result=None)
        history.file(game_id, one)
        (tmp_path / f"{game_id}.json").write_text(dumps_record(one), "utf-8")
    return tmp_path


def run_on(encoding: str, argv: list[str], monkeypatch) -> tuple[int, bytes]:
    """``main(argv)`` with standard output a strict ``encoding`` stream (as under
    ``PYTHONIOENCODING=ascii``); returns the exit status and the bytes written."""
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding, errors="strict", newline="\n")
    monkeypatch.setattr(sys, "stdout", stream)
    status = main(argv)
    stream.flush()
    return status, raw.getvalue()


COMMANDS = {
    "history": lambda s: ["history", "--store", str(s)],
    "history show": lambda s: ["history", "show", GAME_ZOE, "--store", str(s)],
    "stats": lambda s: ["stats", "--store", str(s)],
    "stats --json": lambda s: ["stats", "--json", "--store", str(s)],
    "export": lambda s: ["export", "--store", str(s)],
    "export csv": lambda s: ["export", "--format", "csv", "--store", str(s)],
    "export bgstats": lambda s: ["export", "--format", "bgstats", "--store", str(s)],
    "replay": lambda s: ["replay", str(s / f"{GAME_ZOE}.json")],
    "replay hostile": lambda s: ["replay", str(s / f"{GAME_HOSTILE}.json")],
}


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_writes_what_the_terminal_can_show(store, monkeypatch, command, encoding):
    status, out = run_on(encoding, COMMANDS[command](store), monkeypatch)
    assert status == 0
    assert b"\x1b" not in out and b"\x07" not in out
    text = out.decode(encoding)
    if command == "history show" or command == "replay":
        # the name is there, as far as the terminal can show it
        assert ("Zo? ?" if encoding == "ascii" else "Zoë ?") in text
    if "json" in command or command in ("export", "export bgstats"):
        # JSON outputs stay lossless: what the terminal lacks is a JSON escape
        values = [json.loads(line) for line in text.splitlines() if line.startswith("{")] \
            if command != "export bgstats" else [json.loads(text)]
        assert ZOE in json.dumps(values, ensure_ascii=False)


def test_a_real_ascii_terminal_gets_no_traceback(store):
    """By hand: ``LC_ALL=C PYTHONIOENCODING=ascii patchwork-companion history``."""
    env = {**os.environ, "LC_ALL": "C", "PYTHONIOENCODING": "ascii", "PYTHONUTF8": "0"}
    for argv in (["history", "--store", str(store)], ["replay", str(store / f"{GAME_ZOE}.json")]):
        done = subprocess.run([sys.executable, "-m", "firmware_py.cli", *argv], env=env,
                              capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert b"Traceback" not in done.stderr and b"Zo? ?" in done.stdout


def test_stats_and_replay_escape_control_characters(store, capsys):
    assert main(["stats", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and shown(RED) in out
    assert main(["replay", str(store / f"{GAME_HOSTILE}.json")]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and f"{shown(RED)}: " in out


def test_csv_export_neutralises_formulas_and_escapes(store, capsys):
    assert main(["export", "--format", "csv", "--store", str(store)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    hostile = next(r for r in rows if r["id"] == GAME_HOSTILE)
    assert hostile["p1_name"] == "'" + shown(HOSTILE)
    assert hostile["p2_name"] == shown(RED) and hostile["winner"] == shown(RED)
    zoe = next(r for r in rows if r["id"] == GAME_ZOE)
    assert zoe["p1_name"] == ZOE                       # nothing to neutralise: unchanged


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_every_formula_start_is_neutralised(start):
    assert spreadsheet_cell(start + "1+1") == "'" + start + "1+1"
    assert csv_text(start + "1") in ("'" + start + "1", shown(start + "1"))
    assert not csv_text(start + "1")[:1] in ("=", "+", "-", "@", "\t", "\r")


C1 = "Ann\x9b31m\x9d0;pwn\x9c\x7f\u202eevil"    # 8-bit CSI and OSC, DEL, a right-to-left override


@pytest.mark.parametrize("argv", [["stats", "--json"], ["export"], ["export", "--format", "bgstats"]])
def test_json_outputs_on_a_terminal_escape_what_json_leaves_raw(tmp_path, capsys, argv):
    """JSON escapes C0 controls but leaves DEL, C1 controls (a UTF-8 terminal runs U+009B
    as CSI) and format characters raw: the JSON outputs write them as ``\\uXXXX``."""
    History(tmp_path).file(GAME_ZOE, replace(EXPRESS_RECORD, players=[C1, ZOE], result=None))
    assert main([*argv, "--store", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert not [c for c in out if ord(c) >= 0x7f and not c.isprintable()]
    assert "\\u009b31m" in out and ZOE in out          # same value, printable emoji left as is
    values = json.loads(out) if "bgstats" in argv or "--json" in argv else \
        [json.loads(line) for line in out.splitlines()]
    assert C1 in json.dumps(values, ensure_ascii=False)
