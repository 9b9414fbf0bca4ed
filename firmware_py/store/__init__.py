"""Finished games: their records (the truth) and a SQLite index of them.

Layout, inside the journal folder (``journal.dir``):

``records/<id>.json``
    One game record (``patchwork-game-record/1``) per finished game, named by
    its game id (``20261201-190400-3fa2c1``: local start time and 6 random hex
    digits). Written with ``firmware_py.disk.write_durably`` (a temporary file
    of its own, fsync, rename, fsync the folder), so two writers (the service
    filing a game, the web page renaming a player, ``restore``) never share a
    temporary file; saving a game again replaces its file, so a game is there once.
``history.sqlite3``
    The index (stdlib ``sqlite3``, WAL, ``synchronous=FULL``); schema in
    :mod:`.index`. Everything in it is derived from the records, so
    ``patchwork-companion history --rebuild`` recreates it from them.

The game service files a game when it ends (:meth:`History.file`) and reads
nothing here at start-up; ``history``, ``stats`` and ``export`` read the index.
This room imports only :mod:`firmware_py.rules` and :mod:`firmware_py.companion`.
"""
from .history import History, RebuildReport, StoreError, new_game_id, summarise
from .index import SCHEMA_VERSION, Index

__all__ = ["History", "Index", "RebuildReport", "SCHEMA_VERSION", "StoreError", "new_game_id",
           "summarise"]
