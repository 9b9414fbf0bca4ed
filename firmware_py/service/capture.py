"""Keeps every frame the companion sends: OLED images as PNG (plus a GIF), LED frames as JSON lines."""
from __future__ import annotations

import json
import time
from pathlib import Path


class Capture:
    """Frame keeper for a folder ``out``: ``out/oled/frame-00001.png``...,
    ``out/oled.gif`` (written by :meth:`close`) and ``out/leds.jsonl`` (one
    ``{"t": seconds, "leds": [[r, g, b], ...]}`` per frame, by LED index)."""

    def __init__(self, out: str | Path, clock=time.monotonic):
        self.out = Path(out)
        self.oled_dir = self.out / "oled"
        self.oled_dir.mkdir(parents=True, exist_ok=True)
        for old in self.oled_dir.glob("frame-*.png"):
            old.unlink()
        self.clock = clock
        self.start = clock()
        self.frames: list[tuple[float, object]] = []
        self._leds = open(self.out / "leds.jsonl", "a", encoding="utf-8")

    def oled(self, image) -> None:
        """Keep one OLED frame (a PIL image)."""
        t = self.clock() - self.start
        frame = image.copy()
        self.frames.append((t, frame))
        frame.save(self.oled_dir / f"frame-{len(self.frames):05d}.png")

    def leds(self, frame) -> None:
        """Keep one LED frame (a list of (r, g, b))."""
        t = round(self.clock() - self.start, 4)
        self._leds.write(json.dumps({"t": t, "leds": [list(c) for c in frame]}) + "\n")

    def close(self) -> None:
        """Flush the LED log and write the animated GIF of the OLED frames (2x scale)."""
        self._leds.close()
        if not self.frames:
            return
        images = [f.convert("L").resize((256, 128)) for _, f in self.frames]
        times = [t for t, _ in self.frames] + [self.frames[-1][0] + 3.0]
        durations = [max(60, min(3000, int((b - a) * 1000))) for a, b in zip(times, times[1:])]
        images[0].save(self.out / "oled.gif", save_all=True, append_images=images[1:],
                       duration=durations, loop=0)
