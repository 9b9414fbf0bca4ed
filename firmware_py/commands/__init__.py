"""One module per ``patchwork-companion`` command, each thin over the rest of the package.

Each module has ``add_parser(sub)`` (registers the command and its options) and
a ``run(args)`` returning the exit status; :mod:`firmware_py.cli` wires them up.
"""
