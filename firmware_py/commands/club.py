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
    from ..config import load_or_report
    cfg = load_or_report(path)
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
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
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
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
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
    from ..club.board import Board
    from ..club.serve import load_results
    board = Board("export")
    problems = load_results(board, args.results)
    for problem in problems:
        print(f"club export: {problem}", file=sys.stderr)
    sys.stdout.write(board.records_jsonl() if args.format == "jsonl" else board.results_csv())
    return 0


def _bridge(args) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = _settings(args.config)
    if settings is None:
        return 2
    from ..club.bridge import ClubBridge, ClubError
    from ..club.feedlink import FeedLink
    from ..config import load_config, state_dir
    from ..feed import feed_dir
    cfg = load_config(args.config) if args.config else load_config(None)
    folder = feed_dir(cfg)
    try:
        bridge = ClubBridge(settings, state_dir(cfg) / "club-outbox.sqlite").start()
    except ClubError as exc:
        print(f"club bridge: {exc}", file=sys.stderr)
        return 2
    link = FeedLink(folder, bridge)
    print(f"club bridge: table {settings.table!r} of club {settings.club!r} -> "
          f"{settings.host}:{settings.port}, reading the live feed in {folder}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())     # systemctl stop: say offline, then go
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        link.close()
        bridge.stop()
    return 0
