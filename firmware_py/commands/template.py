"""``patchwork-companion template``: a printable 1:1 SVG of the time board's space centres
(where sensors and LEDs go; see :mod:`firmware_py.bench.template`)."""
from __future__ import annotations


def add_parser(sub) -> None:
    """Register ``template``."""
    p = sub.add_parser("template", help="write a printable 1:1 SVG of the time board's 54 space "
                       "centres (where sensors and LEDs go) from a measured centres file")
    p.add_argument("--centres", help="TOML file of measured centres (default: the shipped, "
                   "approximate one; format in hardware/mechanical.md)")
    p.add_argument("--out", help="SVG file to write (default: standard output); the pages "
                   "go beside it")
    p.add_argument("--paper", choices=("a4", "letter", "none"), default="a4",
                   help="also tile the template over these pages at 1:1 with overlap, "
                   "alignment marks and scale bars (default: %(default)s; none: one sheet)")
    p.set_defaults(func=run)


def run(args) -> int:
    """The command; returns the exit status."""
    from ..bench.template import main as template_main
    return template_main(args.centres, args.out, paper=args.paper)
