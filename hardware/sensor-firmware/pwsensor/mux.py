"""Reading the sensors through 74HC4067 16-channel multiplexers.

All multiplexers share the four select lines S0..S3; each has its own common
output (SIG) on an input pin with a pull-up. Space ``m * 16 + c`` is channel
``c`` of multiplexer ``m``. Hall switches with an open-drain output and reed
switches pull the line low when a magnet (token) is over them.

Pins are any objects with a ``value`` attribute (``digitalio.DigitalInOut`` on
the board, simple fakes in the tests).
"""

CHANNELS = 16


class MuxBank:
    """``spaces`` sensors behind ``len(commons)`` multiplexers.

    select: 4 output pins (S0 first); commons: input pins, one per multiplexer;
    active_low: True when a token pulls the line low; settle: optional
    callable run after switching channels (e.g. a few microseconds of delay);
    no_mux: True when one sensor is wired straight to the first common pin with
    no multiplexer (the one-space test): it reads as space 0 and every other
    space as free (without it, that pin answers for all 16 channels of
    multiplexer 0). Raises ValueError when the multiplexers cannot hold
    ``spaces`` sensors.
    """

    def __init__(self, select, commons, spaces, active_low=True, settle=None, no_mux=False):
        if len(select) != 4:
            raise ValueError("a 74HC4067 needs 4 select lines, got {}".format(len(select)))
        if spaces > CHANNELS * len(commons):
            raise ValueError("{} spaces need {} multiplexers, got {}".format(
                spaces, (spaces + CHANNELS - 1) // CHANNELS, len(commons)))
        self.select = select
        self.commons = commons
        self.spaces = spaces
        self.active_low = active_low
        self.settle = settle
        self.no_mux = no_mux

    def read(self, out):
        """Fill the bytearray ``out`` (length >= spaces) with 1 = token, 0 = free."""
        present = not self.active_low
        if self.no_mux:
            for space in range(self.spaces):
                out[space] = 0
            out[0] = 1 if self.commons[0].value == present else 0
            return
        for channel in range(CHANNELS):
            self._choose(channel)
            space = channel
            for pin in self.commons:
                if space < self.spaces:
                    out[space] = 1 if pin.value == present else 0
                space += CHANNELS

    def _choose(self, channel):
        for bit in range(4):
            self.select[bit].value = bool((channel >> bit) & 1)
        if self.settle is not None:
            self.settle()
