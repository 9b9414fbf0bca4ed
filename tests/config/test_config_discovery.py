"""Which config every command runs with, and configs that must not silently run
something else: empty, NUL-filled, without ``backend``, hostile TOML."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from firmware_py import config
from firmware_py.config import ConfigError, find_config, load_config

GOOD = 'backend = "sim"\n[leds]\ncount = 60\n'


def _env(tmp_path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != config.ENV_VAR}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "xdg"), XDG_STATE_HOME=str(tmp_path / "state"))
    env.update(extra)
    return env


def _cli(tmp_path, *argv, **env):
    return subprocess.run([sys.executable, "-m", "firmware_py.cli", *argv], capture_output=True,
                          text=True, timeout=60, env=_env(tmp_path, **env))


# ------------------------------------------------------------------ the order
def test_find_config_order(tmp_path, monkeypatch):
    system, user = tmp_path / "etc.toml", tmp_path / "xdg" / "patchwork-companion" / "config.toml"
    monkeypatch.setattr(config, "SYSTEM_CONFIG", system)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert find_config(None, env).how == "packaged" and find_config(None, env).path is None
    user.parent.mkdir(parents=True)
    user.write_text(GOOD)
    assert find_config(None, env) == config.Found(user, "user")
    system.write_text(GOOD)
    assert find_config(None, env) == config.Found(system, "system")
    env[config.ENV_VAR] = str(tmp_path / "from-env.toml")              # used even if missing
    assert find_config(None, env) == config.Found(tmp_path / "from-env.toml", config.ENV_VAR)
    assert find_config("given.toml", env) == config.Found(Path("given.toml"), "--config")


def test_the_user_config_defaults_to_dot_config(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config.user_config_path({}) == tmp_path / ".config/patchwork-companion/config.toml"
    assert config.user_config_path({"XDG_CONFIG_HOME": "relative"}) == \
        tmp_path / ".config/patchwork-companion/config.toml"       # XDG: relative paths ignored


@pytest.mark.parametrize("command", [["run"], ["selftest", "--yes", "--seconds", "0.1"],
                                     ["calibrate"], ["config", "check"], ["sim"]])
def test_every_command_finds_the_config_by_itself(tmp_path, command):
    """No --config: each command reads $PATCHWORK_COMPANION_CONFIG (here an empty
    file), says so on its first line, and refuses it."""
    empty = tmp_path / "config.toml"
    empty.write_text("")
    proc = _cli(tmp_path, *command, PATCHWORK_COMPANION_CONFIG=str(empty))
    first = proc.stderr.splitlines()[0]
    assert f"config {empty} (from $PATCHWORK_COMPANION_CONFIG): not valid" in first, proc.stderr
    assert f"{empty}: the file is empty" in proc.stderr
    assert proc.returncode == (78 if command == ["run"] else 2)
    assert "Traceback" not in proc.stderr


def test_config_check_reads_the_user_config(tmp_path):
    user = tmp_path / "xdg" / "patchwork-companion" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('backend = "pi"\n')
    proc = _cli(tmp_path, "config", "check")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == f"config {user} (user config): backend pi"
    assert proc.stdout.strip() == f"{user}: ok"


def test_run_names_the_file_and_the_backend_on_its_first_log_line(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(f'backend = "sim"\n[journal]\ndir = "{tmp_path / "journal"}"\n'
                    f'[sim]\nsensor_link = "{tmp_path / "link"}"\n')
    proc = subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "run"],
                            env=_env(tmp_path, PATCHWORK_COMPANION_CONFIG=str(path)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = line = proc.stderr.readline()
        while line and "companion running" not in line:   # signals handled from here on
            line = proc.stderr.readline()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=20)
    assert first.strip() == (f"INFO firmware_py.cli: config {path} "
                             f"(from $PATCHWORK_COMPANION_CONFIG): backend sim"), first + rest
    assert proc.returncode == 0, rest


# ------------------------------------------------------------------ files that must not run
@pytest.mark.parametrize("content, words", [
    (b"", "the file is empty"),
    (b"\n  \n", "the file is empty"),
    (b"\x00" * 512, "holds only NUL bytes"),
    (b"# only a comment\n", "backend: missing"),
    (b'[leds]\ncount = 60\n', "backend: missing"),
])
def test_a_config_without_backend_is_an_error(tmp_path, content, words):
    path = tmp_path / "config.toml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert len(caught.value.problems) == 1 and words in caught.value.problems[0]


def test_validate_of_a_dict_still_fills_defaults():
    """Code that builds a config in memory (the demo, tests) keeps the default backend."""
    assert config.validate({})[""]["backend"] == "sim"


# ------------------------------------------------------------------ hostile TOML
@pytest.mark.parametrize("text, words", [
    ("backend = " + "[" * 5000 + "]" * 5000 + "\n", "nested more than"),
    ("backend = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n", "nested more than"),
    ("backend = " + "[" * 80 + "]" * 80 + "\n", "nested more than 64"),
    ('backend = "sim"\n' + "a" + ".a" * 150000 + " = 1\n", "longer than 256 KB"),
    ('backend = "sim"\n' + "a" + ".a" * 50000 + " = 1\n", "dotted key has 50001 parts"),
    ('backend = "sim"\n' + "a" + ".a" * 40 + " = 1\n", "dotted key has 41 parts"),
    ('backend = "sim"\n[' + "t." * 30 + "t]\n", "dotted key has 31 parts"),
])
def test_hostile_toml_is_refused_cleanly(tmp_path, text, words):
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.problems[0].startswith("not valid TOML") and words in str(caught.value)


def test_hostile_toml_on_the_command_line_exits_2(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("backend = " + "[" * 100000 + "]" * 100000 + "\n")
    proc = _cli(tmp_path, "config", "check", str(path))
    assert proc.returncode == 2 and "nested more than" in proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr


def test_dots_inside_strings_and_comments_are_not_keys(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('backend = "sim"  # a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t\n'
                    '[sim]\ncapture_dir = "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t"\n'
                    '[leds]\nbrightness = 0.5\n')
    assert load_config(path)["sim"]["capture_dir"].count(".") == 19


@pytest.mark.parametrize("line", ['backend = ["pi"]', 'backend = {pi = 1}',
                                  'backend = "sim"\n[journal]\ndir = [["x"]]',
                                  'backend = "sim"\nsensor = [1, 2]'])
def test_a_list_or_table_where_a_string_belongs(tmp_path, line):
    path = tmp_path / "config.toml"
    path.write_text(line + "\n")
    proc = _cli(tmp_path, "config", "check", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "expected" in proc.stderr
