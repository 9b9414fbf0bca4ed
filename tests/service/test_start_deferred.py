"""Start-up: the game loop runs before the buttons, the LED strip and the OLED are
built (their libraries take most of the start-up); they come up right after it, and
one that fails is reported as at any start, the game going on. READY=1 means the
first screen is shown: it goes out only once the first OLED frame was drawn on the
device (with no OLED built, once the first frame went to the strip)."""
from __future__ import annotations

import errno
import socket

from luma.core.interface.serial import noop

from firmware_py.service import assembly as app
from firmware_py.service.assembly import start_companion
from firmware_py.sim.demo import demo_config
from firmware_py.service.sdnotify import Notifier
from firmware_py.rules import deal, load_spec


class _Watching(Notifier):
    """The real notifier, noting which parts were built and how many frames each output
    had drawn when READY went out."""

    def __init__(self, address: str, parts_of, frames: dict):
        super().__init__(address)
        self.parts_of = parts_of
        self.frames = frames
        self.built_at_ready: dict | None = None
        self.frames_at_ready: dict | None = None

    def ready(self, status=None) -> bool:
        parts = self.parts_of()
        self.built_at_ready = {"buttons": parts.buttons is not None,
                               "strip": parts.strip is not None, "oled": parts.oled is not None}
        self.frames_at_ready = dict(self.frames)
        return super().ready(status)


def _start(tmp_path, frames: dict, monkeypatch):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify.sock"))
    sock.settimeout(5)
    holder: dict = {}
    notifier = _Watching(str(tmp_path / "notify.sock"), lambda: holder["parts"], frames)

    build = app.build_parts

    def keep(*args, **kwargs):
        holder["parts"] = build(*args, **kwargs)
        return holder["parts"]
    monkeypatch.setattr(app, "build_parts", keep)
    companion = start_companion(
        demo_config(fast=True), folder=tmp_path / "journal", notifier=notifier,
        deal=lambda game: deal(load_spec(game), 3),
        on_oled_frame=lambda image: frames.__setitem__("oled", frames["oled"] + 1),
        on_led_frame=lambda frame: frames.__setitem__("led", frames["led"] + 1))
    return companion, notifier, sock


def _ready(sock) -> None:
    while b"READY=1" not in sock.recv(4096):   # other messages (EXTEND_TIMEOUT) come first
        pass


def test_ready_goes_out_once_the_first_screen_is_drawn_on_the_oled(tmp_path, monkeypatch):
    frames = {"oled": 0, "led": 0}
    companion, notifier, sock = _start(tmp_path, frames, monkeypatch)
    try:
        _ready(sock)
        assert notifier.built_at_ready == {"buttons": True, "strip": True, "oled": True}
        assert notifier.frames_at_ready["oled"] >= 1      # the first screen was on the device
        assert notifier.frames_at_ready["led"] >= 1       # after the LED frame of that change
        parts = companion.parts
        assert parts.buttons is not None and parts.strip is not None and parts.oled is not None
        assert parts.failures == [] and companion.service.problems == []
        assert parts.oled.flush(5) and parts.strip.flush(5)
        assert frames["oled"] >= 1 and frames["led"] >= 1     # the game shown on them
        assert companion.service.status.mode == "setup_game"
    finally:
        companion.close()
        sock.close()


def test_an_oled_failing_after_ready_is_reported_and_the_game_goes_on(tmp_path, monkeypatch):
    def i2c_error(*args, **kwargs):
        raise OSError(errno.EREMOTEIO, "Remote I/O error")
    monkeypatch.setattr(noop, "command", i2c_error, raising=False)
    frames = {"oled": 0, "led": 0}
    companion, notifier, sock = _start(tmp_path, frames, monkeypatch)
    try:
        _ready(sock)                         # no OLED to wait for: once the strip shows the game
        assert notifier.frames_at_ready["oled"] == 0 and notifier.frames_at_ready["led"] >= 1
        assert companion.parts.oled.device is None and companion.parts.oled.failed
        assert any(p.startswith("OLED failed to start: [Errno 121]")
                   for p in companion.service.problems)
        assert "OLED failed to start" in companion.service.status.screen.warning
        assert companion.parts.strip.flush(5) and frames["led"] >= 1
        assert companion.parts.buttons is not None and companion.service.status.mode == "setup_game"
    finally:
        companion.close()
        sock.close()
