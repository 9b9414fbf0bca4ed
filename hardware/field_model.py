"""The token magnet's field at a flat-lying hall switch: which magnet, how deep, how far apart.

A desktop tool for the build docs, not part of the service (it never runs on
the Pi). It computes, with magpylib's analytical field of a uniformly
magnetised cylinder, the **vertical** flux density Bz at the hall element of a
DRV5032FC lying flat with its marked face up (a planar hall switch senses only
the flux through that face), for each candidate disc magnet and each layer
stack-up, and from it:

* the capture radius: how far off the sensor's axis a token still switches the
  sensor for certain (|Bz| >= the worst-case operate point BOP max), taken at
  the weakest case (lowest remanence of the grade, the deepest tolerance);
* the release radius: beyond which the sensor releases for certain
  (|Bz| < the worst-case release point BRP min, the lowest), taken at the
  strongest case. Off-axis, Bz turns negative (the field lines return) and the
  omnipolar switch sees that lobe too, so the release radius can be far larger
  than the capture radius;
* the field at the neighbouring space (crosstalk) and the spacing of space
  centres the magnet needs: a token pushed ``push`` mm towards a neighbour
  must leave that neighbour released;
* the lift height at which a token lifted straight up releases;
* the two-token stack (both time tokens on one space, one on the other):
  magnets glued the same pole down add up and attract; opposite poles cancel
  and repel, so the top token slides off;

and picks the recommended magnet and stack-up from the numbers.

Usage (from the repository, with ``pip install -e '.[design]'``)::

    python hardware/field_model.py                 # the tables
    python hardware/field_model.py --markdown      # the tables the docs carry
    python hardware/field_model.py --png hardware/field-model.png

Units: millimetres and millitesla in and out (magpylib works in SI: metres and
tesla). Assumptions (each an argument or a constant below): the magnet's bottom
face lies on the top layer (glued under the token, flush); a 0.1 mm paper
replica under the top layer; the hall element 0.7 mm under the package's top
face (DRV5032 datasheet, "Hall element location"; check yours); tolerance
+-0.5 mm on the whole magnet-to-element distance (not per layer); remanence
N35 1.17-1.22 T, N42 1.28-1.32 T (the grades' ranges); DRV5032FC BOP max 4.8 mT (the datasheet's front page) and
BRP min 0.5 mT (its magnetic characteristics table; read the current
datasheet and pass ``--brp`` if yours differs: the release radius depends on
it). Nothing here was measured on a built board: bom.md's one-space test
checks it on yours.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np

try:
    import magpylib
except ImportError:                   # pragma: no cover - the message is the point
    magpylib = None

#: Candidate magnets: name -> (diameter mm, height mm), axially magnetised discs.
MAGNETS = {"5x2": (5.0, 2.0), "6x3": (6.0, 3.0), "8x2": (8.0, 2.0), "10x2": (10.0, 2.0)}
#: Remanence ranges of the grades, tesla: (lowest, highest).
GRADES = {"N35": (1.17, 1.22), "N42": (1.28, 1.32)}
PAPER_MM = 0.1
ELEMENT_DEPTH_MM = 0.7
TOLERANCE_MM = 0.5
BOP_MAX_MT = 4.8
BRP_MIN_MT = 0.5
PUSH_MM = 5.0                 #: how far off the centre a token must still count
SENSOR_PLACEMENT_MM = 1.0     #: the drilled sensor's own error, added to the push
TOKEN_HEIGHT_MM = 4.0         #: a time token's height (the stack lifts the top magnet by it)
#: Centre to centre of two neighbouring spaces for the crosstalk column: about 20 mm on a
#: Patchwork time board (not measured here; ``--neighbour`` takes yours).
NEIGHBOUR_MM = 20.0
#: Layer stack-ups: name -> (top layer mm, plate mm between the top layer and the sensor).
#: "pocket": the sensor lies in a pocket, flush with the plate's top face;
#: "under plate": its breakout is glued under the plate, sensor face up against it.
STACKUPS = {
    "2 mm top, pocket": (2.0, 0.0),
    "3 mm top, pocket": (3.0, 0.0),
    "2 mm top, under 3 mm plate": (2.0, 3.0),
    "3 mm top, under 3 mm plate": (3.0, 3.0),
    "3 mm top, under 4 mm plate": (3.0, 4.0),
}
STEP_MM = 0.05
REACH_MM = 45.0


@dataclass(frozen=True)
class Result:
    """One magnet, grade and stack-up; every length in mm, field in mT.

    gap: nominal magnet face to hall element; axis: Bz on the axis (nominal);
    capture: worst-case capture radius; release: worst-case release radius;
    lift: lift height (above the top layer) at which the token releases for
    certain; stack_same / stack_opposite: Bz on the axis with both tokens
    stacked, same or opposite pole down (nominal); stack_release: release radius
    of a same-pole stack (worst case); spacing: the smallest distance between
    space centres that leaves a neighbour released (``push`` mm towards it, one
    token or a stack); crosstalk / stack_crosstalk: the largest |Bz| (worst
    case) at the sensor of a neighbour ``neighbour`` mm away with the token (or
    the stack) within ``push`` mm of its centre; neighbour: that distance; ok: captures a token ``push`` +
    sensor placement off the centre.
    """

    magnet: str
    grade: str
    stackup: str
    gap: float
    axis: float
    capture: float
    release: float
    lift: float
    stack_same: float
    stack_opposite: float
    stack_release: float
    spacing: float
    crosstalk: float
    stack_crosstalk: float
    neighbour: float
    ok: bool


def _need_magpylib() -> None:
    if magpylib is None:
        raise SystemExit("field_model.py needs magpylib: pip install -e '.[design]' "
                         "(a desktop tool; not for the Pi)")


def bz(magnet: str, remanence: float, gap: float, offsets, heights=0.0, flip: bool = False):
    """Bz in mT at the hall element for each horizontal offset (mm) of the magnet's axis.

    ``gap``: from the magnet's bottom face down to the element, mm; ``heights``:
    extra lift of the magnet, mm (a number or one per offset); ``flip``: the
    other pole down. Returns a numpy array, one value per offset."""
    _need_magpylib()
    diameter, height = MAGNETS[magnet]
    offsets = np.atleast_1d(np.asarray(offsets, dtype=float))
    lift = np.broadcast_to(np.asarray(heights, dtype=float), offsets.shape)
    sign = -1.0 if flip else 1.0
    cylinder = magpylib.magnet.Cylinder(polarization=(0, 0, sign * remanence),
                                        dimension=(diameter / 1000, height / 1000))
    # the element at the origin; the magnet's centre gap + height/2 (+ lift) above it
    observers = np.column_stack([-offsets, np.zeros_like(offsets), -(gap + height / 2 + lift)])
    return np.atleast_2d(cylinder.getB(observers / 1000))[:, 2] * 1000


def _radius_below(field: np.ndarray, radii: np.ndarray, level: float) -> float:
    """The first radius at which |field| drops below ``level`` (0 if it starts below)."""
    below = np.nonzero(np.abs(field) < level)[0]
    return float(radii[below[0]]) if below.size else float(radii[-1])


def _last_radius_at(field: np.ndarray, radii: np.ndarray, level: float) -> float:
    """The last radius at which |field| still reaches ``level`` (0 if nowhere)."""
    at = np.nonzero(np.abs(field) >= level)[0]
    return float(radii[at[-1]]) if at.size else 0.0


def gap_of(stackup: str, layers: tuple[float, float] | None = None) -> float:
    """Nominal distance in mm from the magnet's bottom face to the hall element, for a
    stack-up of :data:`STACKUPS` or ``layers`` (top mm, plate mm) when given."""
    top, plate = STACKUPS[stackup] if layers is None else layers
    return top + PAPER_MM + plate + ELEMENT_DEPTH_MM


def layers_name(top: float, plate: float) -> str:
    """The stack-up's name in the tables, e.g. "3 mm top, under 4.5 mm plate"."""
    return f"{top:g} mm top, pocket" if plate == 0 else f"{top:g} mm top, under {plate:g} mm plate"


def evaluate(magnet: str, grade: str, stackup: str, bop: float = BOP_MAX_MT,
             brp: float = BRP_MIN_MT, push: float = PUSH_MM,
             token: float = TOKEN_HEIGHT_MM, neighbour: float = NEIGHBOUR_MM,
             layers: tuple[float, float] | None = None) -> Result:
    """The figures for one magnet (a key of :data:`MAGNETS`), grade (of :data:`GRADES`)
    and stack-up (of :data:`STACKUPS`, or named ``stackup`` with ``layers`` = (top mm,
    plate mm) when given); thresholds in mT, lengths in mm.

    Raises:
        KeyError: for a magnet, grade or stack-up not in the tables.
    """
    weak, strong = GRADES[grade]
    gap = gap_of(stackup, layers)
    radii = np.arange(0.0, REACH_MM + STEP_MM / 2, STEP_MM)
    capture = _radius_below(bz(magnet, weak, gap + TOLERANCE_MM, radii), radii, bop)
    release = _last_radius_at(bz(magnet, strong, gap - TOLERANCE_MM, radii), radii, brp)
    lifts = np.arange(0.0, REACH_MM + STEP_MM / 2, STEP_MM)
    lift = _last_radius_at(bz(magnet, strong, gap - TOLERANCE_MM, np.zeros_like(lifts), lifts),
                           lifts, brp)
    _, height = MAGNETS[magnet]
    nominal = sum(GRADES[grade]) / 2
    axis = float(bz(magnet, nominal, gap, [0.0])[0])
    top = height + token
    same = float(axis + bz(magnet, nominal, gap, [0.0], top)[0])
    opposite = float(axis + bz(magnet, nominal, gap, [0.0], top, flip=True)[0])
    stack = (bz(magnet, strong, gap - TOLERANCE_MM, radii)
             + bz(magnet, strong, gap - TOLERANCE_MM, radii, top))
    stack_release = _last_radius_at(stack, radii, brp)
    spacing = push + max(release, stack_release)
    near = np.abs(radii - neighbour) <= push + STEP_MM / 2
    single = bz(magnet, strong, gap - TOLERANCE_MM, radii)
    crosstalk = float(np.abs(single[near]).max())
    stack_crosstalk = float(np.abs(stack[near]).max())
    return Result(magnet, grade, stackup, round(gap, 2), axis, capture, release, lift, same,
                  opposite, stack_release, spacing, crosstalk, stack_crosstalk, neighbour,
                  capture >= push + SENSOR_PLACEMENT_MM)


def evaluate_all(extra: tuple[float, float] | None = None, **limits) -> list[Result]:
    """Every magnet x grade x stack-up, in table order; ``extra`` (top mm, plate mm) adds
    that stack-up (your own layers) after the table's."""
    stackups = {name: layers for name, layers in STACKUPS.items()}
    if extra is not None:
        stackups.setdefault(layers_name(*extra), tuple(extra))
    return [evaluate(m, g, s, layers=stackups[s], **limits)
            for s in stackups for m in MAGNETS for g in GRADES]


def recommend(results: list[Result]) -> Result:
    """The recommended choice: among the results that capture a token pushed off the
    centre (``ok``), the one needing the smallest spacing of space centres; ties go
    to the smaller magnet (volume), then the lower grade.

    Raises:
        ValueError: if no result captures well enough.
    """
    good = [r for r in results if r.ok]
    if not good:
        raise ValueError("no magnet and stack-up captures a token pushed off the centre")

    def volume(r: Result) -> float:
        diameter, height = MAGNETS[r.magnet]
        return diameter * diameter * height

    return min(good, key=lambda r: (round(r.spacing, 1), volume(r), r.grade))


# ----------------------------------------------------------------------------- output

def _row(r: Result) -> str:
    return (f"| {r.magnet} {r.grade} | {r.stackup} | {r.gap:.1f} | {r.axis:.0f} | "
            f"{r.capture:.1f}{'' if r.ok else ' (too small)'} | {r.release:.1f} | {r.lift:.1f} | "
            f"{r.stack_same:.0f} / {r.stack_opposite:.0f} | {r.stack_release:.1f} | "
            f"{r.crosstalk:.2f} / {r.stack_crosstalk:.2f} | {r.spacing:.1f} |")


def _header(neighbour: float) -> str:
    return ("| Magnet | Stack-up | Gap mm | Bz on axis mT | Capture radius mm | Release radius mm "
            "| Released when lifted mm | Stack same / opposite pole mT | Stack release radius mm "
            f"| At a neighbour {neighbour:g} mm away, token / stack mT | Spacing needed mm |"
            "\n|---|---|---|---|---|---|---|---|---|---|---|")


def markdown(results: list[Result] | None = None) -> str:
    """The docs' tables: the recommendation, every magnet at the recommended stack-up,
    and every stack-up for the recommended magnet (Markdown, one string)."""
    results = evaluate_all() if results is None else results
    best = recommend(results)
    same_stack = [r for r in results if r.stackup == best.stackup]
    same_magnet = [r for r in results if (r.magnet, r.grade) == (best.magnet, best.grade)]
    lines = [
        f"**Recommended: {best.magnet} mm {best.grade} disc, {best.stackup} "
        f"(gap {best.gap:.1f} mm to the hall element); space centres at least "
        f"{best.spacing:.1f} mm apart.** It captures a token up to {best.capture:.1f} mm "
        f"off the centre, releases for certain beyond {best.release:.1f} mm "
        f"({best.stack_release:.1f} mm for a two-token stack) and when lifted "
        f"{best.lift:.1f} mm.",
        "",
        f"Every magnet at the recommended stack-up ({best.stackup}):",
        "",
        _header(best.neighbour),
        *(_row(r) for r in same_stack),
        "",
        f"The {best.magnet} {best.grade} at every stack-up:",
        "",
        _header(best.neighbour),
        *(_row(r) for r in same_magnet),
    ]
    return "\n".join(lines) + "\n"


def draw(path: str, results: list[Result] | None = None) -> None:
    """Write a PNG of |Bz| against the token's offset for every magnet (N35) at the
    recommended stack-up, with the worst-case operate and release points."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot

    results = evaluate_all() if results is None else results
    best = recommend(results)
    gap = best.gap
    radii = np.arange(0.0, 30.0 + STEP_MM / 2, STEP_MM)
    figure, axes = pyplot.subplots(figsize=(9, 5.2), dpi=110)
    for magnet in MAGNETS:
        field = np.abs(bz(magnet, sum(GRADES["N35"]) / 2, gap, radii))
        width = 2.6 if magnet == best.magnet else 1.4
        axes.plot(radii, field, linewidth=width, label=f"{magnet} mm N35")
    axes.axhline(BOP_MAX_MT, color="black", linestyle="--", linewidth=1)
    axes.text(29.5, BOP_MAX_MT * 1.08, f"operate, worst case ({BOP_MAX_MT} mT)", ha="right")
    axes.axhline(BRP_MIN_MT, color="grey", linestyle=":", linewidth=1)
    axes.text(29.5, BRP_MIN_MT * 0.92, f"release, worst case ({BRP_MIN_MT} mT)", ha="right",
              va="top")
    axes.axvline(best.spacing - PUSH_MM, color="tab:red", linewidth=1)
    axes.text(best.spacing - PUSH_MM + 0.3, 60, f"neighbour at {best.spacing:.1f} mm,\n"
              f"token {PUSH_MM:.0f} mm towards it", color="tab:red", va="top")
    axes.set_yscale("log")
    axes.set_ylim(0.05, 200)
    axes.set_xlim(0, 30)
    axes.set_xlabel("token's offset from the sensor's axis (mm)")
    axes.set_ylabel("|Bz| at the hall element (mT, log scale)")
    axes.set_title(f"Vertical field at a flat hall switch, {best.stackup} (gap {gap:.1f} mm);\n"
                   "the tables take the worst case of remanence and distance")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(loc="lower left", title="nominal remanence and gap")
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)


def main(argv: list[str] | None = None) -> int:
    """Print the tables (``--markdown``: as the docs carry them) and draw ``--png``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print the docs' Markdown tables")
    parser.add_argument("--png", help="write the field curves to this PNG file")
    parser.add_argument("--bop", type=float, default=BOP_MAX_MT,
                        help="worst-case (highest) operate point, mT (default %(default)s)")
    parser.add_argument("--brp", type=float, default=BRP_MIN_MT,
                        help="worst-case (lowest) release point, mT (default %(default)s)")
    parser.add_argument("--token-height", type=float, default=TOKEN_HEIGHT_MM,
                        help="time token's height, mm (default %(default)s)")
    parser.add_argument("--layers", nargs=2, type=float, metavar=("TOP", "PLATE"),
                        help="add your own stack-up: top layer and plate thickness in mm "
                        "(plate 0: the sensor in a pocket under the top layer)")
    parser.add_argument("--neighbour", type=float, default=NEIGHBOUR_MM,
                        help="centre to centre of neighbouring spaces on your board, mm, for "
                        "the crosstalk figures (default %(default)s; the tables in the docs use it)")
    args = parser.parse_args(argv)
    if not 0 < args.brp < args.bop:
        parser.error(f"--brp ({args.brp}) must be above 0 and below --bop ({args.bop})")
    if not 0 <= args.token_height <= 30:
        parser.error(f"--token-height must be 0..30 mm, got {args.token_height}")
    if not PUSH_MM < args.neighbour <= REACH_MM - PUSH_MM:
        parser.error(f"--neighbour must be more than {PUSH_MM:g} and at most "
                     f"{REACH_MM - PUSH_MM:g} mm, got {args.neighbour}")
    if args.layers and not (0 < args.layers[0] <= 20 and 0 <= args.layers[1] <= 20):
        parser.error(f"--layers must be a top layer of 0..20 mm (above 0) and a plate of "
                     f"0..20 mm, got {args.layers[0]:g} and {args.layers[1]:g}")
    _need_magpylib()
    results = evaluate_all(extra=tuple(args.layers) if args.layers else None, bop=args.bop,
                           brp=args.brp, token=args.token_height, neighbour=args.neighbour)
    if args.markdown:
        sys.stdout.write(markdown(results))
    else:
        for r in results:
            print(f"{r.magnet:>4} {r.grade} | {r.stackup:<27} | gap {r.gap:4.1f} | "
                  f"axis {r.axis:6.1f} mT | capture {r.capture:4.1f} | release {r.release:4.1f} | "
                  f"lift {r.lift:4.1f} | stack {r.stack_same:6.1f}/{r.stack_opposite:6.1f} mT | "
                  f"stack release {r.stack_release:4.1f} | neighbour {r.crosstalk:4.2f}/"
                  f"{r.stack_crosstalk:4.2f} mT | spacing {r.spacing:4.1f}"
                  f"{'' if r.ok else ' | capture too small'}")
        best = recommend(results)
        print(f"recommended: {best.magnet} {best.grade}, {best.stackup}, "
              f"spacing >= {best.spacing:.1f} mm")
    if args.png:
        draw(args.png, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
