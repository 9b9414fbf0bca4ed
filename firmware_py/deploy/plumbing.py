"""The installer's plumbing: the target's paths, each step's report line, and the
three ways a step acts (write a file, remove one, run a command), each of which
only says what it would do in a dry run (see :mod:`firmware_py.deploy.install`)."""
from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..disk import write_durably
from .layout import under
from .options import InstallError, Options, Runner, StepResult, run_command


@dataclass
class Plumbing:
    """What every step uses: ``options``, ``runner`` (runs commands), ``out`` (prints a
    line), the results so far and what changed.

    ``run_commands`` (default: ``options.root`` is "/") decides whether the
    commands acting on a live system run or are only printed ("deferred").
    """

    options: Options
    runner: Runner = run_command
    out: Callable[[str], None] = print
    run_commands: bool | None = None
    results: list[StepResult] = field(default_factory=list)
    _changed: set[str] = field(default_factory=set)
    reboot_needed: bool = False
    #: what the reboot enables, for the closing line ("" until config.txt changes)
    reboot_for: str = ""

    def __post_init__(self) -> None:
        if self.run_commands is None:
            self.run_commands = Path(self.options.root).resolve() == Path("/")

    # -- plumbing ----------------------------------------------------------

    @property
    def root(self) -> Path:
        """The install root: ``--root DIR``, or ``/`` for the running system."""
        return Path(self.options.root)

    def path(self, target: PurePosixPath) -> Path:
        """The host path of ``target`` inside the install root."""
        return under(self.root, target)

    def report(self, name: str, status: str, detail: str) -> StepResult:
        """Print one step's outcome line and keep it for the summary."""
        result = StepResult(name, status, detail)
        self.results.append(result)
        self.out(f"{status:>12}  {name:<14} {detail}")
        if status == "changed":
            self._changed.add(name)
        return result

    def write_file(self, name: str, target: PurePosixPath, data: str, mode: int = 0o644) -> bool:
        """Make ``target`` hold ``data`` (atomically, fsynced); report; True if it differs(ed)."""
        path = self.path(target)
        payload = data.encode("utf-8")
        if path.is_file() and path.read_bytes() == payload and (path.stat().st_mode & 0o777) == mode:
            self.report(name, "ok", f"{target} is up to date")
            return False
        if self.options.dry_run:
            self.report(name, "would change", f"would write {target} ({len(payload)} bytes)")
            return True
        atomic_write(path, payload, mode)
        self.report(name, "changed", f"wrote {target}")
        return True

    def remove_file(self, name: str, target: PurePosixPath) -> None:
        """Remove a managed file if present (idempotent) and report the step."""
        path = self.path(target)
        if not path.exists():
            self.report(name, "ok", f"{target} not needed, absent")
            return
        if self.options.dry_run:
            self.report(name, "would change", f"would remove {target}")
            return
        path.unlink()
        try:
            path.parent.rmdir()
        except OSError:
            pass
        self.report(name, "changed", f"removed {target}")

    def command(self, name: str, argv: Sequence[str], why: str = "", capture: bool = False,
                offline: bool = False) -> None:
        """Run a command that must succeed; only print it in a dry run or under ``--root``.

        ``offline``: the printed command works on the staging root from the
        build machine (it has a ``--root`` flag) rather than on the booted target.

        Raises:
            InstallError: if it exits non-zero.
        """
        shown = shlex.join(argv)
        if self.options.dry_run:
            self.report(name, "would change", f"would run: {shown}{why}")
            return
        if not self.run_commands:
            where = "to finish the root, run" if offline else "on the booted target, run"
            self.report(name, "deferred", f"{where}: {shown}{why}")
            return
        status, output = self.runner(argv, capture)
        if status != 0:
            raise InstallError(f"{name}: `{shown}` failed with exit status {status}{output and ': ' + output}")
        self.report(name, "changed", f"ran: {shown}")

    def query(self, argv: Sequence[str]) -> tuple[int, str]:
        """Run a read-only command (also in a dry run); (255, "") when commands don't run."""
        if not self.run_commands:
            return 255, ""
        return self.runner(argv, True)


    def _would(self, name: str) -> bool:
        return any(r.name == name and r.status == "would change" for r in self.results)

    def _touched(self, *names: str) -> bool:
        """True if any of these steps changed something now (or would, in a dry run)."""
        return any(n in self._changed or self._would(n) for n in names)


def atomic_write(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to ``path`` durably: temp file, fsync, rename, fsync the folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_durably(path, data, mode)
