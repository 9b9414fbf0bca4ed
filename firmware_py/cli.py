"""The ``patchwork-companion`` command line."""
from __future__ import annotations

import argparse
import faulthandler
import logging
import sys


def _replay(args) -> int:
    from .replay_cmd import run_replay
    return run_replay(args.file, as_json=args.json, trace=args.trace)


def _demo(args) -> int:
    from .demo import run_demo
    return run_demo(args.record, args.out, as_json=args.json, fast=args.fast)


def _run(args) -> int:
    from .app import run_forever
    from .config import load_or_report
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    cfg = load_or_report(args.config)
    if cfg is None:
        return 2
    faulthandler.enable()          # a watchdog kill (SIGABRT) leaves every thread's traceback
    return run_forever(cfg)


def _install(args) -> int:
    from .install import main as install_main
    return install_main(args.rest)


def _selftest(args) -> int:
    from .selftest import main as selftest_main
    return selftest_main(args.config, args.seconds, args.yes)


def _calibrate(args) -> int:
    from .calibrate import main as calibrate_main
    return calibrate_main(args.config, args.game, args.write)


def _template(args) -> int:
    from .template import main as template_main
    return template_main(args.centres, args.out)


def _sim(args) -> int:
    from .sim.tui import main as sim_main
    argv = []
    if args.config:
        argv += ["--config", args.config]
    if args.out:
        argv += ["--out", args.out]
    if args.seed is not None:
        argv += ["--seed", str(args.seed)]
    return sim_main(argv)


def _history(args) -> int:
    from .commands.history import run_history
    return run_history(args.config, args.store, args.rebuild, args.player, args.game, args.limit,
                       args.json)


def _config_check(args) -> int:
    from .config import journal_dir_problem, load_or_report
    cfg = load_or_report(args.file)
    if cfg is None:
        return 2
    problem = journal_dir_problem(cfg)
    if problem:                       # valid, but the games would not be saved
        print(f"{args.file}: {problem}", file=sys.stderr)
        return 1
    print(f"{args.file}: ok")
    return 0


def _config_default(args) -> int:
    from .config import default_text
    sys.stdout.write(default_text())
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="patchwork-companion",
                                     description="A table companion for Patchwork and Patchwork Express.")
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="check a game record move by move and print the tally")
    rp.add_argument("file", help="a patchwork-game-record/1 JSON file")
    rp.add_argument("--json", action="store_true", help="print the tally as one JSON object")
    rp.add_argument("--trace", action="store_true", help="print the state after each move as JSON")
    rp.set_defaults(func=_replay)

    dm = sub.add_parser("demo", help="play a whole game record through the companion on simulated hardware")
    dm.add_argument("--record", help="a game record to play (default: a real game bundled with the package)")
    dm.add_argument("--out", default="demo-out", help="folder for OLED frames, LED frames, journal, record")
    dm.add_argument("--json", action="store_true", help="print the tally as replay --json does")
    dm.add_argument("--fast", action="store_true", help="quicker hands and shorter timings")
    dm.set_defaults(func=_demo)

    rn = sub.add_parser("run", help="the companion service (backend from the config: pi or sim)")
    rn.add_argument("--config", help="TOML config file (default: the packaged one, simulated)")
    rn.set_defaults(func=_run)

    sm = sub.add_parser("sim", help="play at a simulated table in the terminal (textual UI)")
    sm.add_argument("--config", help="TOML config file (the backend is forced to sim)")
    sm.add_argument("--out", help="journal folder (default: <state dir>/sim); "
                    "starting again resumes the game kept there")
    sm.add_argument("--seed", type=int, help="deal the patch circle from this seed (repeatable games)")
    sm.set_defaults(func=_sim)

    st = sub.add_parser("selftest", help="check the LEDs, OLED, buttons and token sensor; PASS/FAIL per part")
    st.add_argument("--config", help="TOML config file (default: the packaged one, simulated)")
    st.add_argument("--seconds", type=float, default=10.0, help="time limit per button and for the sensor")
    st.add_argument("--yes", action="store_true", help="do not ask whether the LEDs and the OLED looked right")
    st.set_defaults(func=_selftest)

    cb = sub.add_parser("calibrate", help="learn the sensor channel and the LED under each space")
    cb.add_argument("--config", help="TOML config file to read (and update with --write)")
    cb.add_argument("--game", choices=("patchwork", "patchwork-express"), default="patchwork")
    cb.add_argument("--write", action="store_true", help="write the maps into --config FILE (else print them)")
    cb.set_defaults(func=_calibrate)

    hs = sub.add_parser("history", help="the finished games, newest first (--rebuild: recreate "
                        "the index from the saved records)")
    hs.add_argument("--config", help="TOML config file (its journal.dir holds the history)")
    hs.add_argument("--store", help="the folder holding records/ and history.sqlite3 "
                    "(default: the config's journal folder)")
    hs.add_argument("--rebuild", action="store_true", help="recreate the index from records/*.json")
    hs.add_argument("--player", help="only games with a player of this name")
    hs.add_argument("--game", choices=("patchwork", "patchwork-express"), help="only this game")
    hs.add_argument("--limit", type=int, default=50, help="at most this many games (default 50)")
    hs.add_argument("--json", action="store_true", help="one JSON object per game")
    hs.set_defaults(func=_history)

    tp = sub.add_parser("template", help="write a printable 1:1 SVG of the time board's 54 space "
                        "centres (where sensors and LEDs go) from a measured centres file")
    tp.add_argument("--centres", help="TOML file of measured centres (default: the shipped, "
                    "approximate one; format in hardware/mechanical.md)")
    tp.add_argument("--out", help="SVG file to write (default: standard output)")
    tp.set_defaults(func=_template)

    ins = sub.add_parser("install", add_help=False,
                         help="install on Raspberry Pi OS: venv, config, systemd unit, udev rule "
                              "(see 'install --help'; --dry-run prints the steps)")
    ins.add_argument("rest", nargs=argparse.REMAINDER)
    ins.set_defaults(func=_install)

    cf = sub.add_parser("config", help="check a config file or print the default one")
    cfs = cf.add_subparsers(dest="config_command", required=True)
    ck = cfs.add_parser("check", help="validate FILE and name each bad key with its allowed values")
    ck.add_argument("file")
    ck.set_defaults(func=_config_check)
    cd = cfs.add_parser("default", help="print the default config (every key documented)")
    cd.set_defaults(func=_config_default)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse ``argv`` and run the subcommand; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["install"]:            # the installer parses its own options
        from .install import main as install_main
        return install_main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader (e.g. `head`) went away: not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
