"""Config faults: every key wrong in every way, and a bad config starts nothing.

Each problem message names the key (``section.key``, or ``[section]``) and
says what is allowed; every problem of a file is listed at once; and
``patchwork-companion run --config BAD`` exits 78 with the messages before any
part, journal folder or simulated sensor exists.
"""
from __future__ import annotations

import math
import subprocess
import sys
import time

import pytest

from firmware_py.config import SCHEMA, ConfigError, load_config, validate

# values of the wrong type for each kind of key
WRONG_TYPE = {
    "bool": ["yes", 1, 0, [True]],
    "int": ["5", 1.5, True, [5], {"x": 1}],
    "float": ["0.5", True, [1.0]],
    "str": [5, True, ["x"], 1.5],
    "list": ["/dev/ttyACM0", 5, [5], [""], [True]],
    "map": [3.5, True, "zero-to-53", [-1], ["0"], [1.5]],
}
# what each kind of message says is allowed
ALLOWED = ("expected", "is not one of", "is outside", "is not 'first-last'", "is not a Blinka",
           "list of non-empty strings", "unknown key; allowed", "LED layout", "outside the strip",
           "given to both")


def keys():
    """Every (section, name, Key) of the schema."""
    for section, entries in SCHEMA.items():
        for name, key in entries.items():
            yield section, name, key


def where(section: str, name: str) -> str:
    """How messages name a key: ``section.name`` (or ``name`` at the top)."""
    return f"{section}.{name}" if section else name


def data_for(section: str, name: str, value) -> dict:
    """A config dict setting only ``name`` in ``section`` to ``value``."""
    return {name: value} if section == "" else {section: {name: value}}


def problems(data: dict) -> list[str]:
    """The problems :func:`validate` raises for ``data`` (it must raise)."""
    with pytest.raises(ConfigError) as caught:
        validate(data, "test.toml")
    return caught.value.problems


def out_of_range(key) -> list:
    """Values just outside the key's range or choices (and NaN/inf for floats)."""
    if key.choices:
        return ["bogus" if key.kind == "str" else 0x3E]
    if key.lo is None:
        return []
    step = 1 if key.kind == "int" else 0.001
    bad = [key.lo - step, key.hi + step]
    return bad + ([math.nan, math.inf] if key.kind == "float" else [])


CASES = [(s, n, v, "type") for s, n, k in keys() for v in WRONG_TYPE[k.kind]] + \
        [(s, n, v, "range") for s, n, k in keys() for v in out_of_range(k)] + \
        [("leds", "pin", v, "shape") for v in ["", "GPIO18", "18", "d18", "D18 "]]


@pytest.mark.parametrize("section,name,value,how", CASES,
                         ids=[f"{where(s, n)}={v!r}" for s, n, v, _ in CASES])
def test_every_key_wrong_in_every_way_is_named_with_what_is_allowed(section, name, value, how):
    """One wrong value, one message: it starts with the key and says what is allowed."""
    found = problems(data_for(section, name, value))
    assert len(found) == 1, found
    message = found[0]
    assert message.startswith(f"{where(section, name)}: "), message
    assert any(hint in message for hint in ALLOWED), message


def test_every_key_is_covered_by_some_wrong_value():
    """No key of the schema escapes the wrong-value cases."""
    named = {where(s, n) for s, n, _, _ in CASES}
    assert named == {where(s, n) for s, n, _ in keys()}


@pytest.mark.parametrize("section", [s for s in SCHEMA])
def test_an_unknown_key_in_each_section_names_the_allowed_keys(section):
    """A key that does not exist names the keys that do."""
    found = problems(data_for(section, "colour", "red"))
    assert found == [f"{where(section, 'colour')}: unknown key; allowed: {sorted(SCHEMA[section])}"]


def test_unknown_sections_and_sections_that_are_not_tables():
    """[lights] does not exist; ``buttons = 5`` is not a table."""
    assert problems({"lights": {"fps": 5}}) == [
        f"[lights]: unknown section; allowed: {sorted(s for s in SCHEMA if s)}"]
    found = problems({"buttons": 5})
    assert found[0].startswith("[buttons]: expected a table of keys") and "'ok'" in found[0]


def test_keys_that_are_wrong_together():
    """Button pins shared, and LED maps that do not fit the strip or the board."""
    assert problems({"buttons": {"next": 6}}) == [
        "buttons: next, ok and back need three different BCM pins, got [6, 6, 13]"]
    found = problems({"leds": {"count": 30}})                 # the default map needs 54 LEDs
    assert found[0].startswith("leds.map: LED 30 for space 30 is outside the strip (0..29)")
    found = problems({"leds": {"map": "0-52"}})
    assert found == ["leds.map: LED layout '0-52' gives 53 LEDs but the board has 54 spaces "
                     "(0..53)"]
    found = problems({"leds": {"map_express": [0] * 30}})
    assert found == ["leds.map_express: LED 0 is given to both space 0 and space 1"]


def test_every_problem_of_a_file_is_listed_at_once(tmp_path):
    """A file with eight mistakes gets eight messages, in file order."""
    bad = tmp_path / "bad.toml"
    bad.write_text('backend = "pie"\ncolour = 1\n[buttons]\nok = 40\nhold_seconds = "long"\n'
                   '[leds]\nfps = 0\npin = "GPIO18"\n[sensor]\nports = "/dev/ttyACM0"\n[disco]\nx = 1\n')
    with pytest.raises(ConfigError) as caught:
        load_config(bad)
    found = caught.value.problems
    assert [p.split(":")[0] for p in found] == [
        "backend", "colour", "buttons.ok", "buttons.hold_seconds", "leds.fps", "leds.pin",
        "sensor.ports", "[disco]"]


@pytest.mark.parametrize("content,expected", [
    (None, "file not found"),
    ("folder", "cannot read"),
    (b"\xff\xfe\x00b", "cannot read"),
    ("backend = \n", "not valid TOML"),
    ("[leds\ncount = 3\n", "not valid TOML"),
], ids=["missing", "a-folder", "not-utf8", "no-value", "unclosed-table"])
def test_a_file_that_cannot_be_read_says_why(tmp_path, content, expected):
    """Missing, a folder, not UTF-8, not TOML: one message saying which."""
    path = tmp_path / "config.toml"
    if content == "folder":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert len(caught.value.problems) == 1 and caught.value.problems[0].startswith(expected)


def test_the_packaged_default_is_valid():
    """The shipped default config passes its own checks."""
    assert load_config()["leds"]["pin"] == "D18"


@pytest.mark.parametrize("bad", ["keys", "missing"])
def test_run_with_a_bad_config_exits_78_with_the_messages_and_starts_nothing(tmp_path, bad):
    """``run --config BAD``: exit 78, every message on stderr, no journal folder, no sensor link."""
    state, link = tmp_path / "state", tmp_path / "sensor-link"
    path = tmp_path / "bad.toml"
    if bad == "keys":
        path.write_text(f'backend = "sim"\n[journal]\ndir = "{state}"\n'
                        f'[sim]\nsensor_link = "{link}"\nspeed = 0\n'
                        f'[buttons]\nback = "13"\n[display]\ni2c_address = 0x3E\n')
    began = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "firmware_py.cli", "run", "--config", str(path)],
                          capture_output=True, text=True, timeout=60,
                          env={"XDG_STATE_HOME": str(state), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 78, proc.stderr       # the unit's RestartPreventExitStatus
    assert time.monotonic() - began < 20
    lines = proc.stderr.strip().splitlines()
    assert lines.pop(0) == f"ERROR firmware_py.cli: config {path} (given with --config): not valid"
    assert lines.pop().startswith("ERROR firmware_py.cli: not starting: fix")
    if bad == "keys":
        assert lines == [f"{path}: sim.speed: 0 is outside 0.1..100.0",
                         f"{path}: buttons.back: expected int, got str '13'",
                         f"{path}: display.i2c_address: 62 is not one of ['0x3c', '0x3d']"]
    else:
        assert lines == [f"{path}: file not found: {path}"]
    assert not state.exists() and not link.exists()            # no journal, no sensor, nothing
    assert proc.stdout == ""
