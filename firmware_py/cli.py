"""The ``patchwork-companion`` command line: one module per command in :mod:`.commands`.

Each command module has ``add_parser(sub)`` (its options) and sets ``func`` to
the function that runs it; this module adds the options every command shares
(``-v``/``--log-level``; ``--version`` on the program) and sets up logging.
"""
from __future__ import annotations

import argparse
import logging
import sys

#: the commands in the order ``--help`` lists them (modules of firmware_py.commands)
COMMANDS = ("demo", "replay", "run", "sim", "selftest", "calibrate", "template", "install", "config",
            "web", "history", "analyse", "stats", "export", "backup", "restore", "club")
VERBOSE_DEFAULT = {"run": logging.INFO, "web": logging.INFO, "club": logging.INFO}   #: commands that log by default


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    from importlib import import_module
    parser = argparse.ArgumentParser(prog="patchwork-companion",
                                     description="A table companion for Patchwork and Patchwork Express.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        import_module(f".commands.{name}", __package__).add_parser(sub)
    _add_global_options(parser, sub)
    return parser


def version() -> str:
    """The installed package's version ("unknown" when run from an uninstalled tree)."""
    from importlib.metadata import PackageNotFoundError, version as dist_version
    try:
        return dist_version("patchwork-companion")
    except PackageNotFoundError:
        return "unknown"


class _Version(argparse.Action):
    """``--version``: the version is looked up only when asked (reading the package's
    metadata costs every start of the service some 10 ms otherwise)."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"patchwork-companion {version()}")
        parser.exit()


def _add_global_options(parser, sub) -> None:
    """``--version`` on the command; ``-v``/``--log-level`` before or after the subcommand."""
    from .logs import LEVELS
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="show the program's version and exit")
    children = [child for name, child in sub.choices.items() if name != "install"]
    for p, default in [(parser, None)] + [(child, argparse.SUPPRESS) for child in
                                          dict.fromkeys(children)]:
        p.add_argument("-v", "--verbose", action="count", default=0 if default is None else default,
                       help="log more (-v: info, -vv: debug)")
        p.add_argument("--log-level", choices=LEVELS, default=default,
                       help="log records at this level and above (overrides -v)")


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse ``argv`` and run the subcommand; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["install"]:            # the installer parses its own options
        from .commands.install import main as install_main
        return install_main(argv[1:])
    _write_what_the_terminal_can()
    args = build_parser().parse_args(argv)
    if args.command != "sim":                 # the simulator logs to a file of its own
        from .logs import level_of, setup
        setup(level_of(args.verbose, args.log_level, VERBOSE_DEFAULT.get(args.command,
                                                                          logging.WARNING)))
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader (e.g. `head`) went away: not an error of ours
        sys.stderr.close()
        return 0


def _write_what_the_terminal_can() -> None:
    """Every command prints any text, whatever the terminal's encoding (``LC_ALL=C``,
    ``PYTHONIOENCODING=ascii``, latin-1): a character standard output cannot encode is
    written as ``?`` (standard error: as a ``\\xNN`` escape) instead of ending the command
    with a traceback. JSON outputs escape such characters losslessly instead
    (:func:`.commands.common.json_for`)."""
    for stream, errors in ((sys.stdout, "replace"), (sys.stderr, "backslashreplace")):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors=errors)
            except (ValueError, OSError):       # a closed or detached stream: nothing to do
                pass


if __name__ == "__main__":
    sys.exit(main())
