"""Which token-sensor channel sits under each time-board space (``sensor.map``).

The sensor reports channels (its own numbering: the order its reed switches or
Hall sensors are wired in); the game thinks in time-board spaces. A channel map
gives one channel per space, written like the LED map: comma-separated numbers
and ranges running either way ("0-53", "53-0", "0-26, 40-66"). An empty map is
the identity (channel N is space N). Pure: text in, a value out.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .sensor_protocol import MAX_SPACES

MAX_CHANNEL = MAX_SPACES - 1
"""The highest channel a map may name: a sensor reports at most ``MAX_SPACES`` (128)
channels (hardware/protocol.md)."""


@dataclass(frozen=True)
class ChannelMap:
    """``channels[space]`` is the sensor channel under ``space`` (0..last_space).

    ``channels`` is empty for the identity map. Raises ValueError for a channel
    outside 0..:data:`MAX_CHANNEL` or a channel given to two spaces.
    """

    last_space: int
    channels: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        owner: dict[int, int] = {}
        for space, channel in enumerate(self.channels):
            if not isinstance(channel, int) or isinstance(channel, bool):
                raise ValueError(f"sensor channel for space {space} must be a whole number, "
                                 f"not {channel!r}")
            if not 0 <= channel <= MAX_CHANNEL:
                raise ValueError(f"sensor channel {channel} for space {space} is outside "
                                 f"0..{MAX_CHANNEL}")
            if channel in owner:
                raise ValueError(f"sensor channel {channel} is given to both space "
                                 f"{owner[channel]} and space {space}")
            owner[channel] = space

    @classmethod
    def parse(cls, spec: str | Sequence[int], last_space: int) -> ChannelMap:
        """The map written as ``spec`` (text, or a list of channels, one per space from
        space 0) for a board whose last space is ``last_space`` (53 or 29); "" is the
        identity. Raises ValueError naming the bad part, or saying how many channels it
        gives against the board's spaces."""
        if isinstance(spec, str) and spec.strip() == "":
            return cls(last_space)
        channels = _ranges(spec) if isinstance(spec, str) else list(spec)
        if len(channels) != last_space + 1:
            raise ValueError(f"sensor map {spec!r} gives {len(channels)} channels but the board "
                             f"has {last_space + 1} spaces (0..{last_space})")
        return cls(last_space, tuple(channels))

    def spaces(self, channels: frozenset[int]) -> frozenset[int]:
        """The time-board spaces under the occupied ``channels``; channels the map does
        not name (or, for the identity, past the last space) are left out."""
        if not self.channels:
            return frozenset(c for c in channels if c <= self.last_space)
        space_of = {c: s for s, c in enumerate(self.channels)}
        return frozenset(space_of[c] for c in channels if c in space_of)

    def needs(self) -> int:
        """How many channels the sensor must report for this map (the highest + 1)."""
        return max(self.channels) + 1 if self.channels else self.last_space + 1

    def channel_of(self, space: int) -> int:
        """The channel under ``space`` (0..last_space)."""
        return self.channels[space] if self.channels else space


def _ranges(spec: str) -> list[int]:
    """"0-3, 9-7" -> [0, 1, 2, 3, 9, 8, 7]; ValueError naming a bad part."""
    channels: list[int] = []
    for part in spec.split(","):
        ends = [end.strip() for end in part.split("-")]
        if not 1 <= len(ends) <= 2 or not all(end.isdigit() for end in ends):
            raise ValueError(f"bad channel range {part.strip()!r} in {spec!r}: expected "
                             "'first-last' or a number, e.g. '0-53' or '53-0'")
        first, last = int(ends[0]), int(ends[-1])
        step = 1 if last >= first else -1
        channels.extend(range(first, last + step, step))
    return channels
