"""Runs once at power-up: give the sensor its own USB serial data channel.

With data=True the Pico shows two serial ports: the REPL console and the data
port that carries the frames (the host opens the data port, see README.md).
"""
import usb_cdc

usb_cdc.enable(console=True, data=True)
