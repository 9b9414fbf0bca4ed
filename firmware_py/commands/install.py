"""``patchwork-companion install``: install on Raspberry Pi OS (see :mod:`firmware_py.deploy.install`,
also runnable as ``python3 -m firmware_py.deploy.install``). The installer parses its own options."""
from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    """Register ``install`` (its options are the installer's: ``install --help``)."""
    p = sub.add_parser("install", add_help=False,
                       help="install on Raspberry Pi OS: venv, config, systemd units, udev rule "
                            "(see 'install --help'; --dry-run prints the steps; --web adds the web page)")
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=run)


def run(args) -> int:
    """The command; returns the installer's exit status."""
    return main(args.rest)


def main(argv) -> int:
    """Run the installer on ``argv`` (the arguments after ``install``)."""
    from ..deploy.install import main as install_main
    return install_main(argv)
