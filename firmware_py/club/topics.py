"""Club topics and payloads: what a box publishes and what the scoreboard accepts.

Every box of a club publishes under ``patchwork/<club>/<table>/``:

=========  ==========================  ====  ======  =========================================
topic      payload                     QoS   retain  when
=========  ==========================  ====  ======  =========================================
status     ``online`` / ``offline``    1     yes     ``online`` on connect; ``offline`` is the
                                                     last will (the broker sends it when the box
                                                     goes silent) and the word of a clean stop
state      JSON :func:`state_payload`  1     yes     on every change, and again on reconnect
event      JSON :func:`event_payload`  1     no      each accepted turn and the game's end, in
                                                     order; queued on disk while the broker is away
record     a game record (JSON)        1     no      the finished game; again until acked
ack        JSON :func:`ack_payload`    1     no      published by the scoreboard once it keeps
                                                     (or refuses) a record for good
=========  ==========================  ====  ======  =========================================

A box publishes a finished record again (on each reconnect and every few
minutes) until the scoreboard's ``ack`` names its game id: the broker may lose a
message it had acknowledged (Mosquitto writes its persistence file only now
and then), the scoreboard's own store does not.

A state carries ``seq``, the number of the game's last event when it was made,
so a state delivered late (after a newer one of the same game) is known and skipped.
Every event carries the game id, the turn number (how many moves the game has
after it) and ``seq``, the event's own number in that game (1, 2, 3 ... with no
gaps), so a reader counts none twice: a box that reconnects may send an event
again (QoS 1 is "at least once"). An undo at the table is an ``undo`` event back
to the turn that stands; the turns played after it come as new events.
Club ids and table names are 1 to 32 characters of ``A-Z a-z 0-9 _ -``, so they
never hold the MQTT wildcards ``+`` and ``#`` or a ``/``.

The parsers here treat every payload as hostile: a size cap, JSON without
recursion trouble, and each field's type and range checked. They raise
:class:`PayloadError` saying what is wrong; they never raise anything else.
"""
from __future__ import annotations

import json
import math
import re

from ..rules import jsonsafe

PREFIX = "patchwork"
KINDS = ("status", "state", "event", "record", "ack")
NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,32}")
MAX_PAYLOAD = 64 * 1024          # state and event
MAX_RECORD = 256 * 1024          # a whole game record
MAX_NESTING = 32                 # no honest payload nests deeper


class PayloadError(ValueError):
    """A message the scoreboard will not use; the text says what is wrong with it."""


def check_name(value: object, what: str) -> str:
    """Return ``value`` if it is a valid club id or table name, else raise ValueError
    naming ``what`` and the allowed shape (1-32 of ``A-Z a-z 0-9 _ -``)."""
    if not isinstance(value, str) or not NAME_RE.fullmatch(value):
        raise ValueError(f"{what}: {value!r} is not 1 to 32 letters, digits, '_' or '-'")
    return value


def topic(club: str, table: str, kind: str) -> str:
    """``patchwork/<club>/<table>/<kind>``; ``kind`` is one of :data:`KINDS`."""
    if kind not in KINDS:
        raise ValueError(f"topic kind {kind!r} is not one of {KINDS}")
    return f"{PREFIX}/{club}/{table}/{kind}"


def club_filter(club: str) -> str:
    """The subscription that sees every table of ``club``: ``patchwork/<club>/+/+``."""
    return f"{PREFIX}/{club}/+/+"


def split_topic(name: str, club: str) -> tuple[str, str]:
    """``(table, kind)`` of a topic of ``club``; raises PayloadError for any other topic."""
    parts = name.split("/")
    if len(parts) != 4 or parts[0] != PREFIX or parts[1] != club:
        raise PayloadError(f"topic {name[:80]!r} is not patchwork/{club}/<table>/<kind>")
    if not NAME_RE.fullmatch(parts[2]) or parts[3] not in KINDS:
        raise PayloadError(f"topic {name[:80]!r}: bad table name or kind")
    return parts[2], parts[3]


# ----- building (on the box) ---------------------------------------------------------------
def state_payload(state: dict) -> bytes:
    """Encode a table state (see :func:`parse_state` for the fields) as compact JSON bytes."""
    return json.dumps(state, separators=(",", ":")).encode()


def event_payload(event: dict) -> bytes:
    """Encode an event (see :func:`parse_event` for the fields) as compact JSON bytes."""
    return json.dumps(event, separators=(",", ":")).encode()


# ----- parsing (on the scoreboard) -----------------------------------------------------------
def load_json(payload: bytes, limit: int = MAX_PAYLOAD) -> object:
    """Decode untrusted JSON bytes: at most ``limit`` bytes, UTF-8, nesting at most
    :data:`MAX_NESTING`, no NaN or Infinity. Raises PayloadError otherwise."""
    if len(payload) > limit:
        raise PayloadError(f"payload of {len(payload)} bytes is over the {limit} byte limit")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        raise PayloadError("payload is not UTF-8") from None

    def _no_constants(word):
        raise PayloadError(f"payload holds {word}, which is not JSON")
    try:
        value = json.loads(text, parse_constant=_no_constants)
    except RecursionError:
        raise PayloadError(f"payload nests deeper than {MAX_NESTING} levels") from None
    except ValueError as exc:
        if isinstance(exc, PayloadError):
            raise
        raise PayloadError(f"payload is not JSON: {str(exc)[:80]}") from None
    try:
        return jsonsafe.check_depth(value, "payload", MAX_NESTING)
    except jsonsafe.NestingError:
        raise PayloadError(f"payload nests deeper than {MAX_NESTING} levels") from None


def _obj(data: object, what: str) -> dict:
    if not isinstance(data, dict):
        raise PayloadError(f"{what}: expected a JSON object, got {type(data).__name__}")
    return data


def _int(data: dict, key: str, lo: int, hi: int, *, optional: bool = False) -> int | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if type(value) is not int or not lo <= value <= hi:
        raise PayloadError(f"{key}: expected an integer {lo}..{hi}, got {str(value)[:40]!r}")
    return value


def _str(data: dict, key: str, limit: int = 64) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not 0 < len(value) <= limit:
        raise PayloadError(f"{key}: expected text of 1..{limit} characters")
    return value


def _ts(data: dict) -> float:
    value = data.get("ts")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise PayloadError("ts: expected a time in seconds since 1970")
    return float(value)


def _scores(data: dict) -> list[int]:
    scores = data.get("scores")
    if (not isinstance(scores, list) or len(scores) != 2
            or not all(type(s) is int and -200 <= s <= 500 for s in scores)):
        raise PayloadError("scores: expected two integers -200..500")
    return scores


def _player(data: object, index: int) -> dict:
    p = _obj(data, f"players[{index}]")
    out = {"name": _str(p, "name"), "colour": _str(p, "colour", 16)}
    for key, hi in (("position", 53), ("buttons", 999), ("income", 99), ("empty", 81)):
        out[key] = _int(p, key, 0, hi)
    out["score"] = _int(p, "score", -200, 500)
    out["bonus"] = bool(p.get("bonus", False))
    return out


def parse_state(payload: bytes) -> dict:
    """A table's state: ``{"game_id": str, "turn": int 0..500, "game": "patchwork" |
    "patchwork-express", "over": bool, "to_move": 0|1|None, "winner": 0|1|None,
    "players": [player, player], "ts": float, "seq": int 0..100000 | None}`` where a player is ``{"name", "colour",
    "position" 0..53, "buttons", "income", "empty" 0..81, "score", "bonus"}``.
    An empty payload is a cleared retained state (returns ``{}``).
    Raises PayloadError naming the first bad field."""
    if payload == b"":
        return {}
    data = _obj(load_json(payload), "state")
    game = data.get("game")
    if game not in ("patchwork", "patchwork-express"):
        raise PayloadError(f"game: {str(game)[:40]!r} is not patchwork or patchwork-express")
    players = data.get("players")
    if not isinstance(players, list) or len(players) != 2:
        raise PayloadError("players: expected a list of two players")
    return {"game_id": _str(data, "game_id"), "turn": _int(data, "turn", 0, 500), "game": game,
            "over": bool(data.get("over", False)),
            "to_move": _int(data, "to_move", 0, 1, optional=True),
            "winner": _int(data, "winner", 0, 1, optional=True),
            "players": [_player(p, i) for i, p in enumerate(players)], "ts": _ts(data),
            "seq": _int(data, "seq", 0, 100000, optional=True)}


EVENT_KINDS = ("turn", "undo", "end")


def parse_event(payload: bytes) -> dict:
    """An event: ``{"game_id": str, "seq": int 1..100000, "turn": int 0..500,
    "kind": "turn" | "undo" | "end", "player": 0|1|None, "move": a record move
    (turns), "scores": [int, int], "winner": 0|1|None (end), "ts": float}``.
    Raises PayloadError naming the first bad field."""
    data = _obj(load_json(payload), "event")
    kind = data.get("kind")
    if kind not in EVENT_KINDS:
        raise PayloadError(f"kind: {str(kind)[:40]!r} is not one of {EVENT_KINDS}")
    event = {"game_id": _str(data, "game_id"), "seq": _int(data, "seq", 1, 100000),
             "turn": _int(data, "turn", 0, 500), "kind": kind,
             "player": _int(data, "player", 0, 1, optional=True), "scores": _scores(data),
             "ts": _ts(data), "move": data.get("move"),
             "winner": _int(data, "winner", 0, 1, optional=True)}
    if kind == "end" and event["winner"] is None:
        raise PayloadError("winner: an end event names the winner (0 or 1)")
    return event


def parse_status(payload: bytes) -> str:
    """``"online"`` or ``"offline"``; raises PayloadError for anything else."""
    if payload not in (b"online", b"offline"):
        raise PayloadError(f"status {payload[:20]!r} is not online or offline")
    return payload.decode()


def parse_record(payload: bytes) -> dict:
    """A finished game record (``patchwork-game-record/1``) checked by replaying it.

    Returns ``{"record": dict, "game_id": str, "scores": [a, b], "winner": 0|1,
    "players": [name, name], "game": str}``; raises PayloadError when it is not
    JSON, not a valid record, not a finished game, or when its ``result`` is not
    what its moves give."""
    from ..rules import RecordError, parse_record as parse, replay
    data = _obj(load_json(payload, MAX_RECORD), "record")
    try:
        record = parse(data)
        state, final = replay(record)
    except (RecordError, ValueError, KeyError, TypeError) as exc:
        raise PayloadError(f"record: {str(exc)[:120]}") from None
    if not state.over:
        raise PayloadError("record: the game has not ended")
    claimed = data.get("result")
    if claimed is not None and (claimed.get("scores") != list(final.scores)
                                or claimed.get("winner") != final.winner):
        raise PayloadError(f"record: its result {claimed} is not what its moves give "
                           f"(scores {list(final.scores)}, winner {final.winner})")
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    game_id = meta.get("game_id")
    if not isinstance(game_id, str) or not 0 < len(game_id) <= 64:
        raise PayloadError("record: meta.game_id is missing")
    return {"record": data, "game_id": game_id, "scores": list(final.scores),
            "winner": final.winner, "players": list(record.players), "game": record.game}


def ack_payload(game_id: str, refused: str = "") -> bytes:
    """The scoreboard's answer to a record: ``{"game_id": str, "refused": str}``
    (``refused`` is '' when the record is kept, else why it never will be)."""
    return json.dumps({"game_id": game_id, "refused": refused[:200]},
                      separators=(",", ":")).encode()


def parse_ack(payload: bytes) -> dict:
    """``{"game_id": str, "refused": str}`` of an ack; raises PayloadError otherwise."""
    data = _obj(load_json(payload), "ack")
    refused = data.get("refused", "")
    if not isinstance(refused, str):
        raise PayloadError("refused: expected text")
    return {"game_id": _str(data, "game_id"), "refused": refused[:200]}
