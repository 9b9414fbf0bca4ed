"""Patchwork token sensor: CircuitPython entry point (board I/O only).

Scans the hall sensors through 74HC4067 multiplexers (aiming at 200 Hz; the
scanner measures the rate it really reaches and reports it in STAT frames)
and talks the frame protocol of hardware/protocol.md over usb_cdc.data (or the console when
boot.py did not enable the data port). The logic lives in pwsensor/.
Settings (optional, in settings.toml): PW_SPACES = 54 (Patchwork) or 30
(Express), PW_ACTIVE_LOW = 1 (hall/reed sensors pull low on a magnet),
PW_WATCHDOG = 1 (reset the board when the loop hangs for 2 s; 0 while developing),
PW_NO_MUX = 0 (1: the one-space test, one sensor straight on GP6 without a
multiplexer, read as space 0 only).
"""
import os
import time

import board
import digitalio
import supervisor
import usb_cdc

from pwsensor.mux import MuxBank
from pwsensor.scanner import Scanner

SELECT_PINS = (board.GP2, board.GP3, board.GP4, board.GP5)   # S0..S3 of every mux
COMMON_PINS = (board.GP6, board.GP7, board.GP8, board.GP9)   # SIG of mux 0..3
SCAN_PERIOD_NS = 5000000                                     # aim: 200 Hz


def setting(name, default):
    """An integer from settings.toml (os.getenv gives an int or a str), else default."""
    value = os.getenv(name)
    return default if value is None else int(value)


SPACES = setting("PW_SPACES", 54)
ACTIVE_LOW = setting("PW_ACTIVE_LOW", 1) == 1
NO_MUX = setting("PW_NO_MUX", 0) == 1


def output_pin(pin):
    io = digitalio.DigitalInOut(pin)
    io.direction = digitalio.Direction.OUTPUT
    return io


def input_pin(pin):
    io = digitalio.DigitalInOut(pin)
    io.direction = digitalio.Direction.INPUT
    # Pull.DOWN (PW_ACTIVE_LOW = 0) on a Pico 2 (RP2350) needs an external pull-down of
    # 8.2 kOhm or less per SIG line: erratum RP2350-E9 (README.md, Wiring).
    io.pull = digitalio.Pull.UP if ACTIVE_LOW else digitalio.Pull.DOWN
    return io


def open_port():
    port = usb_cdc.data or usb_cdc.console
    port.timeout = 0
    port.write_timeout = 0.05
    return port


def start_watchdog():
    if not setting("PW_WATCHDOG", 1):
        return None
    try:
        from microcontroller import watchdog
        from watchdog import WatchDogMode
    except ImportError:
        return None
    watchdog.timeout = 2.0
    watchdog.mode = WatchDogMode.RESET
    return watchdog


def main():
    supervisor.runtime.autoreload = False
    port = open_port()
    muxes = (SPACES + 15) // 16
    bank = MuxBank([output_pin(p) for p in SELECT_PINS],
                   [input_pin(p) for p in COMMON_PINS[:muxes]], SPACES, ACTIVE_LOW,
                   no_mux=NO_MUX)

    def write(data):
        if port.connected:          # DTR asserted: the host has the port open
            port.write(data)

    scanner = Scanner(bank.read, SPACES, write, clock=time.monotonic_ns)
    scanner.start()
    dog = start_watchdog()
    was_connected = False
    next_scan = time.monotonic_ns()
    while True:
        now = time.monotonic_ns()
        if now >= next_scan:
            scanner.step(now)
            next_scan += SCAN_PERIOD_NS
            if next_scan < now:
                next_scan = now + SCAN_PERIOD_NS
        if port.connected != was_connected:
            was_connected = port.connected
            if was_connected:
                scanner.connected()
        waiting = port.in_waiting
        if waiting:
            scanner.received(port.read(waiting))
        if dog is not None:
            dog.feed()


main()
