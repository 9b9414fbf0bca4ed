"""The companion's configuration: a TOML file, validated strictly at start.

Every key is in :data:`SCHEMA` with its type, allowed values or range, default
and meaning; the packaged ``default-config.toml`` documents the same keys for
people. Unknown keys, wrong types and out-of-range values are rejected with a
message naming the key and what is allowed, and the service does not start
half-configured (design 3). A config file must name its ``backend``: an empty
file (as a power cut can leave) or one without it is an error, never a
silent switch to the simulation.

Which file: :func:`find_config` looks at ``--config``, then
``$PATCHWORK_COMPANION_CONFIG``, then ``/etc/patchwork-companion/config.toml``,
then the user's ``$XDG_CONFIG_HOME/patchwork-companion/config.toml`` (default
``~/.config``), and else uses the packaged default.

Hostile text is refused before it can hurt: a file over :data:`MAX_BYTES`,
keys dotted more than :data:`MAX_KEY_PARTS` deep (tomllib's memory grows with
the square of that depth), and arrays or inline tables nested deeper than
``jsonsafe.MAX_DEPTH`` are reported like any other bad TOML.
"""
from __future__ import annotations

import os
import sys
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .rules import jsonsafe

ENV_VAR = "PATCHWORK_COMPANION_CONFIG"
SYSTEM_CONFIG = Path("/etc/patchwork-companion/config.toml")
PACKAGED = "the packaged default config"
MAX_BYTES = 256 * 1024          #: a config file longer than this is refused (the default is ~3 KB)
MAX_KEY_PARTS = 16              #: ``a.b.c`` has 3 parts; the schema needs 2
EXIT_CONFIG = 78
"""``run``'s exit status for a config that cannot be used (sysexits' EX_CONFIG); the
systemd unit lists it in ``RestartPreventExitStatus``, so a broken config is not
restarted forever."""


class ConfigError(ValueError):
    """A config problem; ``problems`` lists every bad key with what is allowed."""

    def __init__(self, problems: list[str], source: str = "config"):
        self.problems = problems
        super().__init__(f"{source}: " + "; ".join(problems))


@dataclass(frozen=True)
class Key:
    """One config key: ``kind`` (bool/int/float/str/list/map), ``default``,
    ``choices`` (allowed values) or ``lo``/``hi`` (inclusive range), ``doc``;
    ``pattern`` (a regular expression a str must match whole) with ``shape``
    (what it allows, for the message)."""

    kind: str
    default: Any
    doc: str
    choices: tuple = ()
    lo: float | None = None
    hi: float | None = None
    pattern: str = ""
    shape: str = ""


SCHEMA: dict[str, dict[str, Key]] = {
    "": {
        "backend": Key("str", "sim", "hardware backend: 'pi' on a Raspberry Pi, 'sim' simulated",
                       choices=("pi", "sim")),
    },
    "buttons": {
        "next": Key("int", 5, "BCM pin of the NEXT button (to GND, internal pull-up)", lo=0, hi=27),
        "ok": Key("int", 6, "BCM pin of the OK button", lo=0, hi=27),
        "back": Key("int", 13, "BCM pin of the BACK button", lo=0, hi=27),
        "hold_seconds": Key("float", 1.0, "a press this long is a hold", lo=0.3, hi=5.0),
        "debounce_ms": Key("int", 20, "contact chatter window in milliseconds", lo=0, hi=100),
        "pin_factory": Key("str", "auto", "gpiozero pin factory",
                           choices=("auto", "lgpio", "rpigpio", "native", "mock")),
    },
    "leds": {
        "driver": Key("str", "neopixel", "LED route: neopixel (PWM/PCM, Pi 3/4/Zero 2 W and, with "
                      "the Pi 5 PIO driver, Pi 5), neopixel_spi (SPI MOSI), none",
                      choices=("neopixel", "neopixel_spi", "none")),
        "pin": Key("str", "D18", "Blinka board pin of the strip's data line (neopixel driver)",
                   pattern=r"D[0-9]{1,3}|MOSI", shape="a Blinka pin name like 'D18' or 'MOSI'"),
        "count": Key("int", 54, "number of LEDs on the strip", lo=1, hi=1024),
        "map": Key("map", "0-53", "Patchwork: LED index of each space 0..53: 'first-last' "
                   "(e.g. '0-53' or '53-0') or a list of 54 LED indices"),
        "map_express": Key("map", "0-29", "Patchwork Express: LED of each space 0..29"),
        "brightness": Key("float", 0.25, "brightness cap, 0..1 (limits current: see hardware/bom.md)",
                          lo=0.0, hi=1.0),
        "order": Key("str", "GRB", "colour order of the strip", choices=("GRB", "RGB", "GRBW", "RGBW")),
        "fps": Key("int", 20, "frames per second while something pulses or blinks", lo=5, hi=60),
    },
    "display": {
        "driver": Key("str", "ssd1306", "OLED controller", choices=("ssd1306", "sh1106", "none")),
        "i2c_port": Key("int", 1, "I2C bus number (/dev/i2c-N)", lo=0, hi=20),
        "i2c_address": Key("int", 0x3C, "I2C address of the OLED", choices=(0x3C, 0x3D)),
        "rotate": Key("int", 0, "0 or 2 (upside down): screens are drawn 128x64, so no quarter turns",
                      choices=(0, 2)),
    },
    "sensor": {
        "ports": Key("list", ["/dev/patchwork-sensor", "/dev/serial/by-id/usb-*Pico*-if02"],
                     "device paths, globs or pyserial URLs of the token sensor, tried in order"),
        "baud": Key("int", 115200, "serial speed (ignored by USB CDC)", lo=1200, hi=4000000),
        "map": Key("map", "", "sensor channel of each Patchwork space 0..53 ('' = channel n is "
                   "space n; 'first-last' or a list; written by 'patchwork-companion calibrate')"),
        "map_express": Key("map", "", "sensor channel of each Express space 0..29 ('' = same numbers)"),
        "stable_ms": Key("int", 150, "a reading counts after staying unchanged this long",
                         lo=20, hi=2000),
        "guidance_seconds": Key("float", 2.0, "a wrong board this long gets guidance", lo=0.3, hi=30.0),
        "stop_seconds": Key("float", 2.0, "a token resting this long on a space stopped there (a "
                            "move may have ended; shorter rests are a hand sliding on)",
                            lo=0.5, hi=30.0),
    },
    "journal": {
        "dir": Key("str", "", "folder of the journal and saved game records "
                   "('' = $XDG_STATE_HOME/patchwork-companion or ~/.local/state/patchwork-companion)"),
    },
    "feed": {
        "dir": Key("str", "", "folder of the live feed (live.json and feed/*.sock) that the web "
                   "page and other local readers use ('' = $RUNTIME_DIRECTORY, "
                   "$XDG_RUNTIME_DIR/patchwork-companion or <tmp>/patchwork-companion-<uid>)"),
    },
    "web": {
        "enabled": Key("bool", False, "install and start the LAN page (patchwork-companion-web) "
                       "with the service"),
        "address": Key("str", "127.0.0.1", "the one address the page listens on "
                       "(127.0.0.1 = this machine only; the Pi's LAN address or 0.0.0.0 for the LAN)",
                       pattern=r"[0-9A-Fa-f.:]{2,45}|localhost",
                       shape="an IPv4/IPv6 address or 'localhost'"),
        "port": Key("int", 8080, "TCP port of the page", lo=1024, hi=65535),
        "pin_minutes": Key("int", 5, "how long a PIN shown on the OLED lets a browser edit "
                           "player names", lo=1, hi=60),
        "hostnames": Key("list", [], "more names the page answers to (a reverse proxy's); it "
                         "always answers to its address, this machine's host name and .local "
                         "name, localhost and its own IP addresses"),
    },
    "club": {
        "enabled": Key("bool", False, "publish this table to the club's MQTT broker (from the "
                       "networked process; the game service stays offline)"),
        "host": Key("str", "localhost", "host name or address of the club's MQTT broker",
                    pattern=r"[A-Za-z0-9.:_-]{1,253}", shape="a host name or address"),
        "port": Key("int", 1883, "broker port (1883 plain, 8883 TLS by convention)", lo=1, hi=65535),
        "tls": Key("bool", False, "connect with TLS (the broker's certificate is checked)"),
        "ca_file": Key("str", "", "CA certificate file for TLS ('' = the system's CAs)"),
        "username": Key("str", "", "user name at the broker ('' = anonymous)"),
        "password_file": Key("str", "", "file whose first line is the password (needed with a user name)"),
        "club": Key("str", "club", "club id: the topic level patchwork/<club>/...",
                    pattern=r"[A-Za-z0-9_-]{1,32}", shape="1 to 32 letters, digits, '_' or '-'"),
        "table": Key("str", "table-1", "this box's table name: patchwork/<club>/<table>/...",
                     pattern=r"[A-Za-z0-9_-]{1,32}", shape="1 to 32 letters, digits, '_' or '-'"),
        "keepalive": Key("int", 5, "MQTT keep-alive in seconds: the broker calls a silent box "
                         "offline after 1.5 times this", lo=2, hi=60),
    },
    "sim": {
        "sensor_link": Key("str", "", "path of the simulated sensor's pty link ('' = a temporary one)"),
        "speed": Key("float", 1.0, "simulated hands' speed factor", lo=0.1, hi=100.0),
        "capture_dir": Key("str", "", "folder to keep every OLED and LED frame in ('' = none)"),
    },
}


def _check(section: str, name: str, key: Key, value: Any) -> str | None:
    where = f"{section}.{name}" if section else name
    kinds = {"bool": bool, "int": int, "float": (int, float), "str": str, "list": list}
    if key.kind == "map":
        return _check_map(where, value)
    if isinstance(value, bool) and key.kind != "bool" or not isinstance(value, kinds[key.kind]):
        return f"{where}: expected {key.kind}, got {type(value).__name__} {value!r}"
    if key.choices and value not in key.choices:
        shown = [hex(c) if where.endswith("address") else c for c in key.choices]
        return f"{where}: {value!r} is not one of {shown}"
    if key.lo is not None and not key.lo <= value <= key.hi:
        return f"{where}: {value!r} is outside {key.lo}..{key.hi}"
    if key.pattern and not re.fullmatch(key.pattern, value):
        return f"{where}: {value!r} is not {key.shape}"
    if key.kind == "list" and not all(isinstance(v, str) and v for v in value):
        return f"{where}: expected a list of non-empty strings"
    return None


def _check_map(where: str, value: Any) -> str | None:
    if value == "" and where.startswith("sensor."):
        return None
    if isinstance(value, str):
        parts = value.split("-")
        if len(parts) == 2 and all(p.strip().isdigit() for p in parts):
            return None
        return f"{where}: {value!r} is not 'first-last' (e.g. '0-53')"
    if isinstance(value, list) and all(type(v) is int and v >= 0 for v in value):
        return None
    return f"{where}: expected 'first-last' or a list of LED indices (integers >= 0)"


def validate(data: dict, source: str = "config") -> dict[str, dict[str, Any]]:
    """Check a parsed TOML dict against :data:`SCHEMA`; return it with defaults filled in.

    Raises :class:`ConfigError` listing every problem (unknown section or key,
    wrong type, value not allowed, duplicate button pins).
    """
    problems: list[str] = []
    out: dict[str, dict[str, Any]] = {s: {k: key.default for k, key in keys.items()}
                                      for s, keys in SCHEMA.items()}
    for name, value in data.items():
        if name in SCHEMA and name and not isinstance(value, dict):
            problems.append(f"[{name}]: expected a table of keys ({sorted(SCHEMA[name])}), "
                            f"got {type(value).__name__} {value!r}")
            continue
        if isinstance(value, dict) and name not in SCHEMA[""]:
            if name not in SCHEMA or name == "":
                problems.append(f"[{name}]: unknown section; allowed: "
                                f"{sorted(s for s in SCHEMA if s)}")
                continue
            _section(name, value, out, problems)
        else:
            _section("", {name: value}, out, problems)
    problems += _check_layouts(out)
    problems += _check_club(out["club"])
    pins = [out["buttons"][b] for b in ("next", "ok", "back")]
    if len(set(pins)) != 3:
        problems.append(f"buttons: next, ok and back need three different BCM pins, got {pins}")
    if problems:
        raise ConfigError(problems, source)
    return out


def _check_club(club: dict) -> list[str]:
    """A user name needs a password file (no default password) that only its owner and
    group may read; TLS's CA file, if named, exists."""
    problems = []
    if club["username"] and not club["password_file"]:
        problems.append("club.password_file: a club.username needs a password file")
    for key in ("password_file", "ca_file"):
        path = club[key]
        if club["enabled"] and path and not Path(path).expanduser().is_file():
            problems.append(f"club.{key}: {path} is not a readable file")
    problems += _others_may_read(club["password_file"])
    return problems


def _others_may_read(path: str) -> list[str]:
    """The problem of a password file that every user of the machine may read."""
    if not path:
        return []
    try:
        mode = Path(path).expanduser().stat().st_mode
    except OSError:
        return []
    if mode & 0o004:
        return [f"club.password_file: {path} is readable by every user of this machine "
                f"(mode {mode & 0o777:o}); chmod o-rwx {path}"]
    return []


def _check_layouts(out: dict) -> list[str]:
    """Each LED and sensor map must give every space its own index (53/29 = last spaces)."""
    from .hw.channel_map import ChannelMap
    from .view.leds import LedLayout
    problems = []
    checks = [("leds", "map", 53), ("leds", "map_express", 29),
              ("sensor", "map", 53), ("sensor", "map_express", 29)]
    for section, key, last in checks:
        value = out[section][key]
        if value == "":
            continue
        try:
            if section == "leds":
                LedLayout.parse(value, out["leds"]["count"], last)
            else:
                ChannelMap.parse(value, last)
        except ValueError as exc:
            problems.append(f"{section}.{key}: {exc}")
    return problems


def _section(section: str, values: dict, out: dict, problems: list[str]) -> None:
    keys = SCHEMA[section]
    for name, value in values.items():
        where = f"{section}.{name}" if section else name
        if name not in keys:
            problems.append(f"{where}: unknown key; allowed: {sorted(keys)}")
            continue
        problem = _check(section, name, keys[name], value)
        if problem:
            problems.append(problem)
        else:
            out[section][name] = value


def default_text() -> str:
    """The packaged, commented default config (it runs the simulation)."""
    return resources.files("firmware_py").joinpath("default-config.toml").read_text("utf-8")


@dataclass(frozen=True)
class Found:
    """Where the config comes from: ``path`` (None: the packaged default) and
    ``how`` it was chosen ("--config", "$PATCHWORK_COMPANION_CONFIG", "system",
    "user", "packaged")."""

    path: Path | None
    how: str

    @property
    def label(self) -> str:
        """The file for messages: its path, or "the packaged default config"."""
        return str(self.path) if self.path is not None else PACKAGED

    def describe(self) -> str:
        """E.g. ``/etc/patchwork-companion/config.toml (system config)``."""
        why = {"--config": "given with --config", ENV_VAR: f"from ${ENV_VAR}",
               "system": "system config", "user": "user config", "packaged": "no config file found"}
        return f"{self.label} ({why.get(self.how, self.how)})"


def user_config_path(environ=None) -> Path:
    """``$XDG_CONFIG_HOME/patchwork-companion/config.toml`` (default ``~/.config``)."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / "patchwork-companion" / "config.toml"


def find_config(explicit: str | Path | None = None, environ=None) -> Found:
    """The config every command uses: ``explicit`` (``--config``), else
    ``$PATCHWORK_COMPANION_CONFIG``, else :data:`SYSTEM_CONFIG` if it exists,
    else the user's XDG config if it exists, else the packaged default.

    A file named explicitly or by the variable is used even if it is missing
    (loading it then says so); the other two only when they exist.
    """
    environ = os.environ if environ is None else environ
    if explicit:
        return Found(Path(explicit), "--config")
    if environ.get(ENV_VAR):
        return Found(Path(environ[ENV_VAR]), ENV_VAR)
    if os.path.lexists(SYSTEM_CONFIG):
        return Found(SYSTEM_CONFIG, "system")
    user = user_config_path(environ)
    if os.path.lexists(user):
        return Found(user, "user")
    return Found(None, "packaged")


def _hostile(text: str) -> str | None:
    """A reason to refuse TOML text before parsing it, or None."""
    if len(text) > MAX_BYTES:
        return f"longer than {MAX_BYTES // 1024} KB: not a config file"
    plain = _STRINGS.sub('""', text)            # quoted text and comments hold no structure
    longest = max((m.group(0).count(".") + 1 for m in _DOTTED.finditer(plain)), default=0)
    if longest > MAX_KEY_PARTS:
        return f"a dotted key has {longest} parts (at most {MAX_KEY_PARTS})"
    return None


_STRINGS = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*',
                      re.S)
_DOTTED = re.compile(r'(?:[A-Za-z0-9_-]+|"")(?:[ \t]*\.[ \t]*(?:[A-Za-z0-9_-]+|""))+')


def parse_toml(text: str, source: str = "config") -> dict:
    """``tomllib.loads`` for text from outside: raises :class:`ConfigError`
    ("not valid TOML: ...") for bad TOML, hostile size or nesting, never
    RecursionError or MemoryError."""
    reason = _hostile(text)
    if reason is None:
        try:
            return jsonsafe.check_depth(tomllib.loads(text), "the TOML")
        except tomllib.TOMLDecodeError as exc:
            reason = str(exc)
        except RecursionError:
            reason = f"nested more than {jsonsafe.MAX_DEPTH} levels deep"
        except jsonsafe.NestingError as exc:
            reason = str(exc)
    raise ConfigError([f"not valid TOML: {reason}"], source)


def load_config(path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Read and validate a config file (None: the packaged default).

    Returns ``{section: {key: value}}`` with the top-level keys under "".
    Raises :class:`ConfigError` for a missing/unreadable/empty file, bad or
    hostile TOML, a file without ``backend``, or bad keys.
    """
    source = str(path) if path else "default-config.toml"
    try:
        text = Path(path).read_text("utf-8") if path else default_text()
    except FileNotFoundError:
        raise ConfigError([f"file not found: {path}"], source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"cannot read: {exc}"], source) from exc
    if not text.strip("\x00 \t\r\n"):
        what = "holds only NUL bytes" if "\x00" in text else "is empty"
        raise ConfigError([f"the file {what} (a power cut while it was written?); it must at "
                           f"least name the backend, e.g. backend = \"pi\""], source)
    data = parse_toml(text, source)
    if "backend" not in data:
        raise ConfigError(["backend: missing; a config file names its backend: 'pi' on a "
                           "Raspberry Pi, 'sim' simulated"], source)
    return validate(data, source)


def config_line(found: Found, cfg: dict | None) -> str:
    """The first line every config-reading command gives: the file and its backend,
    e.g. ``config /etc/patchwork-companion/config.toml (system config): backend pi``."""
    if cfg is None:
        return f"config {found.describe()}: not valid"
    return f"config {found.describe()}: backend {cfg['']['backend']}"


def discover(explicit: str | Path | None = None, say=None, stream=None) -> tuple[Found, dict | None]:
    """What every command does first: :func:`find_config`, :func:`load_config`, then
    ``say(line, ok)`` with :func:`config_line` (default: print it on standard error),
    then each problem as ``FILE: problem`` on ``stream`` (standard error).

    Returns ``(found, cfg)``; ``cfg`` is None when the config cannot be used
    (``run`` then exits :data:`EXIT_CONFIG`, the others 2).
    """
    stream = stream or sys.stderr
    say = say or (lambda line, ok: print(line, file=stream))
    found = find_config(explicit)
    try:
        cfg = load_config(found.path)
    except ConfigError as exc:
        say(config_line(found, None), False)
        for problem in exc.problems:
            print(f"{found.label}: {problem}", file=stream)
        return found, None
    say(config_line(found, cfg), True)
    return found, cfg


def load_or_report(path: str | Path | None = None, stream=None) -> dict | None:
    """:func:`load_config`, printing each problem as ``FILE: problem`` on ``stream``
    (standard error by default) and returning None instead of raising."""
    try:
        return load_config(path)
    except ConfigError as exc:
        for problem in exc.problems:
            print(f"{path or 'default config'}: {problem}", file=stream or sys.stderr)
        return None


def state_dir(cfg: dict) -> Path:
    """The journal/records folder from ``journal.dir`` (or the user's state folder)."""
    configured = cfg["journal"]["dir"]
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "patchwork-companion"


def journal_dir_problem(cfg: dict) -> str | None:
    """None when the journal folder of ``cfg`` can be written (or, when it does not exist
    yet, created), else what is wrong, e.g. "journal.dir: /var/lib/x is not writable
    (read-only: Read-only file system)". Creates nothing but a probe file it removes."""
    from .companion.journal import writable_problem
    folder = state_dir(cfg)
    parent = folder
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent == folder:
        problem = writable_problem(folder)
        return f"journal.dir: {problem}; games would not be saved" if problem else None
    if not os.access(parent, os.W_OK):
        return (f"journal.dir: {folder} does not exist and cannot be created in {parent} "
                f"(not writable); games would not be saved")
    return None
