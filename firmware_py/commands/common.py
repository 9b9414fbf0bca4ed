"""Options and helpers shared by the history commands (history, stats, export, backup, restore)."""
from __future__ import annotations

import codecs
import json
import re
import sys
from pathlib import Path

GAMES = ("patchwork", "patchwork-express")


def add_store_options(parser) -> None:
    """``--config FILE`` and ``--store DIR`` (which store to read)."""
    parser.add_argument("--config", help="TOML config file (the store is in its journal.dir)")
    parser.add_argument("--store", help="the store folder itself (default: journal.dir of the "
                        "config, where run and the terminal simulator keep their games)")


def add_filters(parser) -> None:
    """``--player NAME`` and ``--game G``."""
    parser.add_argument("--player", help="only games with a player of this name (exact)")
    parser.add_argument("--game", choices=GAMES, help="only this game")


def store_folder(args) -> Path | None:
    """The store folder of ``args`` (None after printing the config's problems)."""
    if getattr(args, "store", None):
        return Path(args.store).expanduser()
    from ..config import state_dir
    _, cfg = discover(getattr(args, "config", None), quiet)
    if cfg is None:
        return None
    folder = state_dir(cfg)
    legacy = folder / "sim" / "records"
    if legacy.is_dir() and any(legacy.glob("*.json")):
        print(f"note: reading the store in {folder}; games of an older simulator are in "
              f"{legacy.parent} (--store {legacy.parent} reads them)", file=sys.stderr)
    return folder


def quiet(line: str, ok: bool) -> None:
    """A ``say`` for :func:`discover` that speaks only when the config cannot be used."""
    if not ok:
        print(line, file=sys.stderr)


CONFIG_HELP = ("TOML config file (default: $PATCHWORK_COMPANION_CONFIG, else "
               "/etc/patchwork-companion/config.toml, else "
               "$XDG_CONFIG_HOME/patchwork-companion/config.toml, else the packaged default)")


def discover(explicit: str | None, say=None):
    """``config.discover``: find and load the config the way ``run``, ``selftest``,
    ``calibrate``, ``sim`` and ``config check`` all do (``--config``, then
    ``$PATCHWORK_COMPANION_CONFIG``, the system file, the user's XDG file, the packaged
    default), first saying which file and backend; returns ``(found, cfg or None)``."""
    from ..config import discover as find
    return find(explicit, say)


def found_path(found) -> str | None:
    """The config file's path as text, or None for the packaged default."""
    return str(found.path) if found.path is not None else None


def reconcile_store(folder: Path) -> None:
    """Before a command reads the history: an index that lost rows (deleted, emptied, an old
    copy put back) is rebuilt from the records, said on standard error. Any error is left
    to the reading that follows, which says it; an index that lost rows and cannot be
    rebuilt now (another process holds its write lock) is said, with what to do."""
    import sqlite3

    from ..store import History
    history = History(folder)
    try:
        said = history.reconcile()
    except sqlite3.OperationalError as exc:        # locked: the reading may still work
        said = _not_reconciled(history, exc)
    except (OSError, sqlite3.Error):
        return
    if said:
        print(f"patchwork-companion: {said}", file=sys.stderr)


def _not_reconciled(history, exc: Exception) -> str:
    """What to say when the index lost rows but its rebuild was refused (``exc``); ""
    when the index and the records agree after all, or cannot be compared."""
    import sqlite3
    try:
        why = history.disagreement()
    except (OSError, sqlite3.Error):
        return ""
    return (f"{history.db_path}: {why}; not rebuilt now ({exc}: another process holds the "
            "index: the service, a sqlite3 shell, a backup tool, restore?), so what follows "
            "may miss games; the service rebuilds it once the lock goes, or run "
            "'patchwork-companion history --rebuild'") if why else ""


def fail(message: str) -> int:
    """Print ``patchwork-companion: message`` on standard error; returns exit status 2."""
    print(f"patchwork-companion: {message}", file=sys.stderr)
    return 2


def _json_escape(exc: UnicodeEncodeError) -> tuple[str, int]:
    """Codec error handler: the characters an encoding lacks, as JSON ``\\uXXXX`` escapes."""
    return "".join(json.dumps(c)[1:-1] for c in exc.object[exc.start:exc.end]), exc.end


codecs.register_error("patchwork-json-escape", _json_escape)

#: characters ``json.dumps`` leaves raw that may not be printable (it escapes only C0)
_RAW_IN_JSON = re.compile("[^\x00-\x7e]")


def _escape_unprintable(match: re.Match) -> str:
    char = match.group()
    return char if char.isprintable() else json.dumps(char)[1:-1]


def json_for(out, text: str) -> str:
    """JSON ``text`` as the stream ``out`` can write it: each character its encoding lacks
    (an emoji on an ASCII or latin-1 terminal) becomes JSON's ``\\uXXXX`` escape, which
    reads back as the same value (non-ASCII text only ever stands inside JSON strings).
    So do the characters JSON itself leaves raw that a terminal would act on: DEL, the
    C1 controls (a UTF-8 terminal runs U+009B as CSI) and format characters such as a
    right-to-left override. ``text`` otherwise unchanged."""
    text = _RAW_IN_JSON.sub(_escape_unprintable, text)
    encoding = getattr(out, "encoding", None)
    if not encoding:
        return text
    return text.encode(encoding, "patchwork-json-escape").decode(encoding)
