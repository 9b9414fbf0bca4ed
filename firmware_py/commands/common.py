"""Options and helpers shared by the history commands (history, stats, export, backup, restore)."""
from __future__ import annotations

import sys
from pathlib import Path

GAMES = ("patchwork", "patchwork-express")


def add_store_options(parser) -> None:
    """``--config FILE`` and ``--store DIR`` (which store to read)."""
    parser.add_argument("--config", help="TOML config file (the store is in its journal.dir)")
    parser.add_argument("--store", help="the store folder itself (default: journal.dir of the "
                        "config; the terminal simulator keeps its games in <that>/sim)")


def add_filters(parser) -> None:
    """``--player NAME`` and ``--game G``."""
    parser.add_argument("--player", help="only games with a player of this name (exact)")
    parser.add_argument("--game", choices=GAMES, help="only this game")


def store_folder(args) -> Path | None:
    """The store folder of ``args`` (None after printing the config's problems)."""
    if getattr(args, "store", None):
        return Path(args.store).expanduser()
    from ..config import load_or_report, state_dir
    cfg = load_or_report(getattr(args, "config", None))
    return None if cfg is None else state_dir(cfg)


def fail(message: str) -> int:
    """Print ``patchwork-companion: message`` on standard error; returns exit status 2."""
    print(f"patchwork-companion: {message}", file=sys.stderr)
    return 2
