"""A real Mosquitto broker for the club tests: one listener on 127.0.0.1, a
password file (every user has the same password), no persistence unless asked,
an ACL file when given, started and stopped by the test."""
from __future__ import annotations

import getpass
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

USER, PASSWORD = "box", "quilt-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """``start()`` / ``kill()`` / ``start()`` again on the same port; ``password_file``
    holds the box's password for :class:`ClubSettings`."""

    def __init__(self, folder: Path, persistence: bool = False, users: tuple[str, ...] = (USER,),
                 acl: str = ""):
        from conftest import missing_reason
        if missing_reason("mosquitto"):
            import pytest
            pytest.skip(missing_reason("mosquitto"))
        self.folder = folder
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        passwd = folder / "passwd"
        for i, user in enumerate(users):
            subprocess.run(["mosquitto_passwd", "-b", *(["-c"] if i == 0 else []), str(passwd),
                            user, PASSWORD], check=True, capture_output=True)
        os.chmod(passwd, 0o600)
        self.password_file = folder / "box-password"
        self.password_file.write_text(PASSWORD + "\n")
        self.password_file.chmod(0o600)           # config check refuses one others may read
        self.conf = folder / "mosquitto.conf"
        acl_line = ""
        if acl:
            (folder / "acl").write_text(acl)
            acl_line = f"acl_file {folder / 'acl'}\n"
        self.conf.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous false\n"
                             f"user {getpass.getuser()}\n"
                             f"password_file {passwd}\n" + acl_line
                             + (f"persistence true\npersistence_location {folder}/\n" if persistence
                                else "persistence false\n")
                             + "max_queued_messages 10000\nlog_dest stderr\nlog_type error\n")

    def start(self) -> "Broker":
        self.proc = subprocess.Popen(["mosquitto", "-c", str(self.conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not start")

    def stop(self) -> None:
        """SIGTERM: Mosquitto saves its sessions and retained messages first."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(5)

    def settings(self, table: str = "t1", club: str = "club1", password_file: Path | None = None,
                 user: str = USER):
        from firmware_py.club.bridge import ClubSettings
        return ClubSettings("127.0.0.1", self.port, club, table, username=user,
                            password_file=str(password_file or self.password_file))
