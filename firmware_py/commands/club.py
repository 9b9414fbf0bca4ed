"""``patchwork-companion club ...``: club mode's commands.

- ``club serve``: the scoreboard page of every table of the club;
- ``club simulate``: simulated boxes, to try a broker before the evening;
- ``club export``: the scoreboard's finished games as JSON Lines or CSV;
- ``club bridge``: a box's bridge on its own (the web page's process runs the
  same bridge when ``[club] enabled = true``).

The broker, login and club id come from the config's ``[club]`` section.
"""
from __future__ import annotations

import argparse
import logging
import signal
import sys
import tempfile
import threading


def add_parser(sub) -> None:
    """Register ``club`` and its subcommands on the top-level ``sub`` parsers."""
    cl = sub.add_parser("club", help="club mode: many boxes on one MQTT broker, one scoreboard")
    cls = cl.add_subparsers(dest="club_command", required=True)
    sv = cls.add_parser("serve", help="the club's live scoreboard page (subscribes to the broker)")
    sv.add_argument("--config", help="TOML config file whose [club] names the broker and the club")
    sv.add_argument("--bind", default="127.0.0.1", help="address to serve the page on (default 127.0.0.1)")
    sv.add_argument("--port", type=int, default=8090, help="port of the page (default 8090)")
    sv.add_argument("--results", default="club-results", help="folder keeping the finished games' records")
    sv.set_defaults(func=_serve)
    si = cls.add_parser("simulate", help="run simulated boxes that play and publish random games")
    si.add_argument("--config", help="TOML config file whose [club] names the broker and the club")
    si.add_argument("--boxes", type=int, default=10, help="how many boxes (1..500)")
    si.add_argument("--rate", type=float, default=1.0, help="moves a second per box (0.01..20)")
    si.add_argument("--seconds", type=float, help="stop after this long (default: until Ctrl-C)")
    si.add_argument("--prefix", default="sim", help="table names are PREFIX-01, PREFIX-02, ...")
    si.set_defaults(func=_simulate)
    br = cls.add_parser("bridge", help="publish this box's table to the club broker (from the live feed)")
    br.add_argument("--config", help="TOML config file with [club] and the feed folder")
    br.set_defaults(func=_bridge)
    ex = cls.add_parser("export", help="print the finished games a scoreboard kept")
    ex.add_argument("--results", default="club-results", help="the scoreboard's results folder")
    ex.add_argument("--format", choices=("jsonl", "csv"), default="csv")
    ex.set_defaults(func=_export)


def _settings(path: str | None):
    from ..club.bridge import ClubError, ClubSettings
    from .common import discover, quiet
    _, cfg = discover(path, quiet)
    if cfg is None:
        return None
    settings = ClubSettings.from_config(cfg)
    try:
        import paho.mqtt.client as mqtt
        settings.login(mqtt.Client(mqtt.CallbackAPIVersion.VERSION2))   # password and CA file
    except ClubError as exc:
        print(f"{path or 'default config'}: {exc}", file=sys.stderr)
        return None
    return settings


def _serve(args) -> int:
    settings = _settings(args.config)
    if settings is None:
        return 2
    from ..club.bridge import ClubError
    from ..club.serve import serve
    try:
        return serve(settings, args.results, args.bind, args.port)
    except ClubError as exc:
        print(exc, file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"club serve: cannot serve on {args.bind}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2


def _simulate(args) -> int:
    logging.getLogger("firmware_py.club").setLevel(logging.WARNING)   # not a line per box
    if not 1 <= args.boxes <= 500 or not 0.01 <= args.rate <= 20:
        print("club simulate: --boxes is 1..500 and --rate 0.01..20", file=sys.stderr)
        return 2
    settings = _settings(args.config)
    if settings is None:
        return 2
    from ..club.simboxes import run_boxes
    with tempfile.TemporaryDirectory(prefix="club-sim-") as folder:
        played = run_boxes(settings, args.boxes, args.rate, folder, args.seconds, args.prefix)
    print(f"{args.boxes} boxes played {played} moves")
    return 0


def _export(args) -> int:
    from pathlib import Path

    from ..club.board import Board
    from ..club.results import FILE, ResultStore, StoreError
    board = Board("export")
    if not (Path(args.results).expanduser() / FILE).is_file():
        print(f"club export: no scoreboard results in {args.results} (no {FILE} there)",
              file=sys.stderr)
        return 1
    try:
        store = ResultStore(args.results)
    except StoreError as exc:
        print(f"club export: {exc}", file=sys.stderr)
        return 1
    problems = store.load(board)
    store.close()
    for problem in problems:
        print(f"club export: {problem}", file=sys.stderr)
    sys.stdout.write(board.records_jsonl() if args.format == "jsonl" else board.results_csv())
    return 0


def start_bridge(cfg: dict, config_path: str | None = None):
    """Start this box's club bridge reading the live feed, if ``[club] enabled``.

    Returns a function that stops it (says ``offline``, keeps the queue on disk), or
    None when club mode is off or its settings cannot work (the reason is logged:
    the caller goes on without the club)."""
    if not cfg["club"]["enabled"]:
        return None
    from ..club.bridge import ClubBridge, ClubError, ClubSettings
    from ..club.feedlink import FeedLink
    from ..config import state_dir
    from ..service.feed import feed_dir
    log = logging.getLogger("firmware_py.club")
    settings = ClubSettings.from_config(cfg)
    try:
        bridge = ClubBridge(settings, state_dir(cfg) / "club-outbox.sqlite").start()
    except (ClubError, OSError) as exc:
        log.error("club: not publishing: %s", exc)
        return None
    folder = feed_dir(cfg)
    link = FeedLink(folder, bridge)
    log.info("club: table %r of club %r -> %s:%s, reading the live feed in %s", settings.table,
             settings.club, settings.host, settings.port, folder)

    def stop() -> None:
        """Stop reading the feed, then say offline and disconnect (the queue stays on disk)."""
        link.close()
        bridge.stop()
    return stop


def _bridge(args) -> int:
    from .common import discover, quiet
    _, cfg = discover(args.config, quiet)
    if cfg is None or _settings(args.config) is None:
        return 2
    if not cfg["club"]["enabled"]:
        print("club bridge: [club] enabled is false in the config; nothing to publish", file=sys.stderr)
        return 2
    stop_bridge = start_bridge(cfg, args.config)
    if stop_bridge is None:
        return 1
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())     # systemctl stop: say offline, then go
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        stop_bridge()
    return 0
