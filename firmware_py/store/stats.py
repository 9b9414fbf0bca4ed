"""Statistics over the index of finished games (read-only SQL on :mod:`.index`'s tables).

Only games the rules ended (``finished = 1``) count in statistics; a game ended
early from the menu is in the history but has no winner. Everything goes by
player name, exactly as written in the records ("Green" and "Yellow" are names
like any other).
"""
from __future__ import annotations


def count_games(index, player: str | None = None, game: str | None = None) -> int:
    """How many games are indexed, with the same filters as ``Index.games`` (``player``:
    a player of that exact name; ``game``: that game kind)."""
    if player is None:
        sql, args = "SELECT count(*) FROM games", []
        if game is not None:
            sql, args = sql + " WHERE game = ?", [game]
        return index.db.execute(sql, args).fetchone()[0]
    sql = ("SELECT count(DISTINCT p.game_id) FROM players p JOIN games g ON g.id = p.game_id "
           "WHERE p.name = ?")
    args = [player]
    if game is not None:
        sql, args = sql + " AND g.game = ?", args + [game]
    return index.db.execute(sql, args).fetchone()[0]


def player_names(index) -> list[str]:
    """Every player name in the history, most games first (then by name)."""
    rows = index.db.execute("SELECT name, count(*) AS n FROM players GROUP BY name "
                            "ORDER BY n DESC, name")
    return [r[0] for r in rows]


def player_stats(index, game: str | None = None) -> list[dict]:
    """Per player name, over finished games (of kind ``game`` if given), most games first:
    ``name``, ``games``, ``wins``, ``avg_score``, ``best_score``, ``bonus_rate`` (share of
    their Patchwork games in which they held the 7x7 special tile, 0..1; Express has
    none), ``avg_empty`` (squares), ``avg_income`` (final button income)."""
    args: list = []
    extra = ""
    if game is not None:
        extra, args = " AND g.game = ?", [game]
    rows = index.db.execute(f"""
        SELECT p.name AS name, count(*) AS games, sum(p.winner) AS wins,
               avg(p.score) AS avg_score, max(p.score) AS best_score,
               sum(CASE WHEN g.game = 'patchwork' THEN p.special ELSE 0 END) AS bonus,
               sum(CASE WHEN g.game = 'patchwork' THEN 1 ELSE 0 END) AS patchwork_games,
               avg(p.empty) AS avg_empty, avg(p.income) AS avg_income
        FROM players p JOIN games g ON g.id = p.game_id
        WHERE g.finished = 1{extra}
        GROUP BY p.name ORDER BY games DESC, wins DESC, p.name""", args)
    out = []
    for r in rows:
        out.append({"name": r["name"], "games": r["games"], "wins": r["wins"],
                    "avg_score": r["avg_score"], "best_score": r["best_score"],
                    "bonus_rate": r["bonus"] / r["patchwork_games"] if r["patchwork_games"] else 0.0,
                    "avg_empty": r["avg_empty"], "avg_income": r["avg_income"]})
    return out


def game_stats(index) -> list[dict]:
    """Per game kind over finished games: ``game``, ``games``, ``avg_score`` (all players),
    ``best_score``, ``avg_winning_score``, ``avg_duration_s`` (None when unknown)."""
    rows = index.db.execute("""
        SELECT g.game AS game, count(DISTINCT g.id) AS games, avg(p.score) AS avg_score,
               max(p.score) AS best_score,
               avg(CASE WHEN p.winner = 1 THEN p.score END) AS avg_winning_score,
               avg(g.duration_s) AS avg_duration_s
        FROM games g JOIN players p ON p.game_id = g.id
        WHERE g.finished = 1 GROUP BY g.game ORDER BY g.game""")
    return [dict(r) for r in rows]


def score_series(index, names: list[str]) -> dict[str, list[int]]:
    """Each name's scores in finished games, oldest first (for charts)."""
    out = {}
    for name in names:
        rows = index.db.execute("""
            SELECT p.score FROM players p JOIN games g ON g.id = p.game_id
            WHERE g.finished = 1 AND p.name = ? ORDER BY g.ended_unix, g.id""", (name,))
        out[name] = [r[0] for r in rows]
    return out


def summary(index, top: int = 6) -> dict:
    """Everything the statistics page and command show: ``players``, ``games`` and the
    ``scores`` series of the ``top`` players with most games."""
    players = player_stats(index)
    return {"players": players, "games": game_stats(index),
            "scores": score_series(index, [p["name"] for p in players[:top]])}


def page_of_games(index, player: str | None = None, game: str | None = None, limit: int = 50,
                  offset: int = 0) -> list[dict]:
    """The same rows as ``Index.games`` (``game_rows`` dicts, newest first, same filters),
    choosing the page's ids on the ``games`` table first so that only ``limit`` games are
    joined with their players (the view alone sorts every game: 50 ms at 10,000 games)."""
    where, args = [], []
    if player is not None:
        where.append("id IN (SELECT game_id FROM players WHERE name = ?)")
        args.append(player)
    if game is not None:
        where.append("game = ?")
        args.append(game)
    ids = ("SELECT id FROM games" + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY ended_unix DESC, id DESC LIMIT ? OFFSET ?")
    sql = f"SELECT * FROM game_rows WHERE id IN ({ids}) ORDER BY ended_unix DESC, id DESC"
    return [dict(r) for r in index.db.execute(sql, args + [limit, offset])]
