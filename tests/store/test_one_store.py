"""One store per user: the terminal simulator keeps its games and the player names
where ``history``, ``web`` and ``backup`` look by default, and ``backup`` takes the
names with the games."""
from __future__ import annotations

import json
import tarfile
from dataclasses import replace
from types import SimpleNamespace

from conftest import GOLDEN
from firmware_py.cli import main
from firmware_py.commands.common import store_folder
from firmware_py.config import load_or_report
from firmware_py.rules import parse_record
from firmware_py.store import History


def _config(tmp_path):
    path = tmp_path / "box.toml"
    path.write_text(f'backend = "sim"\n[journal]\ndir = "{tmp_path / "state"}"\n')
    return path


def test_the_simulator_keeps_its_games_where_the_history_commands_read(tmp_path):
    from firmware_py.service.assembly import names_path
    from firmware_py.sim.tui import sim_folder
    config = _config(tmp_path)
    cfg = load_or_report(str(config))
    assert sim_folder(cfg) == store_folder(SimpleNamespace(store=None, config=str(config)))
    assert names_path(cfg).parent == sim_folder(cfg)         # the names beside the games


def test_history_and_backup_read_a_simulated_game_with_no_option(tmp_path, capsys):
    from firmware_py.sim.tui import sim_folder
    config = _config(tmp_path)
    folder = sim_folder(load_or_report(str(config)))
    History(folder).file("20261201-190400-abcdef",
                         replace(parse_record(GOLDEN[0]), players=("Ann", "Bob"), result=None))
    (folder / "names.json").write_text(json.dumps(["Ann", "Bob"]))
    assert main(["history", "--config", str(config)]) == 0
    assert "20261201-190400-abcdef" in capsys.readouterr().out
    target = tmp_path / "backup.tar.gz"
    assert main(["backup", str(target), "--config", str(config)]) == 0
    said = capsys.readouterr().out
    assert "1 game from" in said and "with the player names" in said
    with tarfile.open(target) as tar:
        names = tar.getnames()
    assert "names.json" in names and "records/20261201-190400-abcdef.json" in names


def test_games_of_an_older_simulator_are_pointed_at(tmp_path, capsys):
    config = _config(tmp_path)
    old = tmp_path / "state" / "sim"
    History(old).file("20261201-190400-abcdef",
                      replace(parse_record(GOLDEN[0]), players=("Ann", "Bob"), result=None))
    main(["history", "--config", str(config)])
    err = capsys.readouterr().err
    assert f"--store {old}" in err
