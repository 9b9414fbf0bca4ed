"""What the installer is asked to do (:class:`Options`), what each step reports
(:class:`StepResult`), how it fails (:class:`InstallError`) and how it runs a command."""
from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

class InstallError(Exception):
    """A step cannot be done; the message says which and what to do."""


@dataclass(frozen=True)
class Options:
    """What to install where. Paths in the target are given as absolute POSIX paths.

    Attributes:
        root: the target root ("/" = this machine).
        dry_run: only print what would be done.
        source: a checkout holding ``pyproject.toml`` and ``systemd/``
            (default: the checkout this module lives in).
        package: a pip requirement to install instead of the checkout, e.g.
            ``"patchwork-companion==0.1.0"`` (the unit files still come from ``source``).
        python: the interpreter that creates the venv.
        leds_driver: ``"auto"`` (keep the default config's) or one of :data:`LED_DRIVERS`;
            used only when the config file is written.
        model: ``"auto"`` (read /proc/device-tree/model), one of
            :data:`firmware_py.deploy.plan.MODELS`, or ``"other"`` (a Pi 3/4/Zero 2 W).
        arch: ``"auto"`` (this machine's, or aarch64 under ``--root``), ``"aarch64"``
            (64-bit Raspberry Pi OS) or ``"armv7l"`` (32-bit).
        python_version: ``"auto"`` (ask ``python``; 3.11 under ``--root``) or "3.11", "3.13", ...
        config_template: a TOML file to start the config from (default: the packaged one).
        start: enable *and* start the service (``False``: enable only).
        reinstall: run pip even when the install stamp matches.
        system_site_packages: create the venv with ``--system-site-packages``
            (so Raspberry Pi OS's python3-lgpio can be used).
        web: also install and start the web page (``patchwork-companion-web.service``),
            setting ``[web] enabled = true`` and ``address = web_address`` in the config.
        web_address: the address the page listens on with ``web`` (default: every
            interface, so the LAN can reach it).
    """

    root: Path = Path("/")
    dry_run: bool = False
    source: Path | None = None
    package: str | None = None
    python: str = "/usr/bin/python3"
    leds_driver: str = "auto"
    model: str = "auto"
    arch: str = "auto"
    python_version: str = "auto"
    config_template: Path | None = None
    start: bool = True
    reinstall: bool = False
    system_site_packages: bool = True
    web: bool = False
    web_address: str = "0.0.0.0"


@dataclass(frozen=True)
class StepResult:
    """One step's outcome.

    ``status`` is one of ``"ok"`` (already in place), ``"changed"`` (done now),
    ``"would change"`` (dry run), ``"deferred"`` (a command left for the target
    system: printed, not run, under ``--root``), ``"warning"`` (a check found
    something the maker must fix; the step says what) or ``"skipped"`` (not applicable).
    """

    name: str
    status: str
    detail: str


Runner = Callable[[Sequence[str], bool], tuple[int, str]]


def run_command(argv: Sequence[str], capture: bool) -> tuple[int, str]:
    """Run ``argv``; return (exit status, stdout if ``capture`` else "").

    Raises:
        InstallError: if the program does not exist.
    """
    try:
        done = subprocess.run(list(argv), text=True, capture_output=capture, check=False)
    except FileNotFoundError as exc:
        raise InstallError(f"{argv[0]}: not found ({exc})") from exc
    return done.returncode, (done.stdout or "") if capture else ""
