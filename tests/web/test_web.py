"""The web process over real HTTP (aiohttp served on a thread; urllib as the client):
read-only pages, Origin checks, the PIN shown on the OLED, the live event stream, and
that it listens on the configured address only."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from firmware_py.service.feed import ControlListener, FeedPublisher
from firmware_py.web.library import Library
from firmware_py.web.server import HUB, make_app
from test_feed import _capture, _ui_after
from test_faults_rig import GOLDEN_RECORDS, wait_until
from web_helpers import ServerThread, fill_store


def request(url, data: bytes | None = None, headers: dict | None = None):
    """(status, headers, body text) of one request; HTTP errors are answers too."""
    req = urllib.request.Request(url, data=data, headers=headers or {},
                                 method="POST" if data is not None else "GET")
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(req, timeout=10) as resp:
            return resp.status, resp.headers, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.fixture
def site(tmp_path):
    feed = tmp_path / "feed"
    feed.mkdir()
    store = tmp_path / "store"
    fill_store(store, 12)
    app = make_app(feed, Library(store), tmp_path / "names.json", pin_minutes=5)
    with ServerThread(app) as server:
        server.feed, server.names, server.store = feed, tmp_path / "names.json", store
        yield server


def test_pages_answer_and_carry_no_outside_resources(site):
    for path in ("/", "/history", "/history?player=Anna&page=1", "/stats", "/downloads",
                 "/players", "/static/style.css", "/static/live.js", "/patch/patchwork/5.svg"):
        status, headers, body = request(site.url + path)
        assert status == 200, path
        assert "http://" not in body.replace(site.url, "").replace("http://www.w3.org/2000/svg", "")
        assert "https://" not in body
        assert headers["X-Content-Type-Options"] == "nosniff"
    status, headers, body = request(site.url + "/")
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    status, _, body = request(site.url + "/history?game=chess")
    assert status == 400 and "game must be one of" in body and "Traceback" not in body
    status, _, body = request(site.url + "/game/nope")
    assert status == 404 and "no game &#x27;nope&#x27;" in body


def test_history_page_filters_and_game_page(site):
    status, _, body = request(site.url + "/history?player=Anna")
    assert status == 200
    with Library(site.store).history.index() as index:
        anna = [r["id"] for r in index.games(player="Anna", limit=100)]
    assert body.count("<tr data-id=") == len(anna) > 0
    assert all(f'data-id="{gid}"' in body for gid in anna)
    status, _, page = request(site.url + f"/game/{anna[0]}")
    assert status == 200 and 'id="replay-data"' in page
    status, headers, text = request(site.url + f"/download/{anna[0]}.json")
    assert status == 200 and json.loads(text)["format"] == "patchwork-game-record/1"
    status, _, csv_text = request(site.url + "/export/games.csv")
    assert status == 200 and len(csv_text.strip().splitlines()) == 13
    status, _, bg = request(site.url + "/export/bgstats.json")
    assert status == 200 and len(json.loads(bg)["plays"]) == 12


def test_every_post_needs_this_pages_origin(site):
    for origin in (None, "http://evil.example", "null", f"http://127.0.0.1:{site.port + 1}"):
        headers = {"Origin": origin} if origin else {}
        status, _, body = request(site.url + "/pin", b"", headers)
        assert status == 403 and "must come from this page" in body, origin
    # the right origin gets through the check (no service is listening: 503, not 403)
    status, _, body = request(site.url + "/pin", b"", {"Origin": site.url})
    assert status == 503 and "not running" in body


def test_names_are_edited_only_with_the_pin_from_the_oled(site):
    shown = []
    listener = ControlListener(site.feed, shown.append)
    origin = {"Origin": site.url, "Content-Type": "application/x-www-form-urlencoded"}
    try:
        status, _, _ = request(site.url + "/players", b"names=Zed", origin)
        assert status == 403                                   # no session
        status, _, body = request(site.url + "/pin", b"", origin)
        assert status == 200 and "A PIN is on the OLED" in body
        wait_until(lambda: shown, "the PIN sent to the service")
        pin = shown[0].pin
        assert pin not in body                                 # only the OLED shows it
        wrong = "000000" if pin != "000000" else "111111"
        status, _, body = request(site.url + "/login", f"pin={wrong}".encode(), origin)
        assert status == 403 and "wrong PIN (4 tries left)" in body
        status, headers, _ = request(site.url + "/login", f"pin={pin}".encode(), origin)
        assert status == 303
        cookie = headers["Set-Cookie"].split(";")[0]
        assert "HttpOnly" in headers["Set-Cookie"] and "SameSite=Strict" in headers["Set-Cookie"]
        status, _, body = request(site.url + "/players", None, {"Cookie": cookie})
        assert "<textarea" in body
        # a session still needs the Origin: a cross-site form cannot use it
        status, _, _ = request(site.url + "/players", b"names=Mallory",
                               {"Cookie": cookie, "Origin": "http://evil.example"})
        assert status == 403
        status, _, _ = request(site.url + "/players", "names=Anna%0AB%C3%A9a%0AGreen".encode(),
                               {**origin, "Cookie": cookie})
        assert status == 303
        assert json.loads(site.names.read_text()) == {"names": ["Anna", "Béa"]}
        status, _, body = request(site.url + "/players", ("names=" + "x" * 30).encode(),
                                  {**origin, "Cookie": cookie})
        assert status == 400 and "longer than 24" in body
        status, _, _ = request(site.url + "/login", f"pin={pin}".encode(), origin)
        assert status == 403                                   # one PIN, one session
    finally:
        listener.close()


def test_five_wrong_pins_void_the_pin(site):
    from firmware_py.web.server import GATE
    shown = []
    listener = ControlListener(site.feed, shown.append)
    origin = {"Origin": site.url, "Content-Type": "application/x-www-form-urlencoded"}
    clock = [1000.0]
    site.app[GATE].clock = lambda: clock[0]
    try:
        request(site.url + "/pin", b"", origin)
        wait_until(lambda: shown, "the PIN")
        pin = shown[0].pin
        wrong = "000000" if pin != "000000" else "111111"
        for _ in range(5):
            request(site.url + "/login", f"pin={wrong}".encode(), origin)
            clock[0] += 60                        # past each back-off wait
        status, _, body = request(site.url + "/login", f"pin={pin}".encode(), origin)
        assert status == 403 and "no valid PIN" in body
    finally:
        listener.close()


def test_the_event_stream_pushes_each_new_snapshot(site):
    pub = FeedPublisher(site.feed)
    try:
        conn = socket.create_connection(("127.0.0.1", site.port), timeout=10)
        conn.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        reader = conn.makefile("rb")
        while reader.readline() not in (b"\r\n", b""):
            pass                                             # the response headers
        wait_until(lambda: site.app[HUB].clients, "the page to be registered")
        ui = _ui_after(GOLDEN_RECORDS[0], 7)
        pub.publish(_capture(ui))
        event = _next_event(reader)
        assert event["turn"] == len(ui.session.groups) and event["seq"] == 1
        ui = _ui_after(GOLDEN_RECORDS[0], 8)
        pub.publish(_capture(ui))
        assert _next_event(reader)["turn"] == len(ui.session.groups)
        conn.close()
    finally:
        pub.close()


def _next_event(reader) -> dict:
    while True:
        line = reader.readline()
        assert line, "the event stream ended"
        line = line.strip()
        if b"data: " in line:
            return json.loads(line[line.index(b"data: ") + 6:])


def test_the_web_command_listens_on_the_configured_address_only(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "XDG_RUNTIME_DIR": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "web", "--port", str(port)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _listening(port):
            time.sleep(0.1)
        listening = _listening(port)
        assert listening == ["0100007F"], listening          # 127.0.0.1 (the default) only
        maps = Path(f"/proc/{proc.pid}/maps").read_text()
        assert "libssl" not in maps and "_ssl" not in maps     # plain HTTP: ssl left out
        with pytest.raises(OSError):
            socket.create_connection((_other_address(), port), timeout=2).close()
    finally:
        proc.terminate()
        out = proc.communicate(timeout=10)[0].decode()
    assert "Traceback" not in out and proc.returncode in (0, -15)


def _listening(port: int) -> list[str]:
    """Local IPv4 addresses (hex, as /proc/net/tcp writes them) listening on ``port``."""
    found = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        addr, hexport = fields[1].split(":")
        if int(hexport, 16) == port and fields[3] == "0A":
            found.append(addr)
    return found


def _other_address() -> str:
    """An address of this machine other than 127.0.0.1 (127.0.0.2 is loopback too)."""
    return "127.0.0.2"


def test_the_page_catches_up_from_live_json_and_rebinds_a_vanished_socket(site):
    hub = site.app[HUB]
    pub = FeedPublisher(site.feed)
    try:
        ui = _ui_after(GOLDEN_RECORDS[0], 5)
        snap = pub.publish(_capture(ui))
        wait_until(lambda: (hub.snapshot or {}).get("seq") == snap["seq"], "the datagram")
        (site.feed / "feed" / "web.sock").unlink()          # the folder was cleaned up
        ui = _ui_after(GOLDEN_RECORDS[0], 6)
        snap = pub.publish(_capture(ui))                   # no socket: only live.json has it
        wait_until(lambda: (hub.snapshot or {}).get("seq") == snap["seq"], "the catch-up",
                   timeout=10)
        wait_until(lambda: (site.feed / "feed" / "web.sock").exists(), "the socket again",
                   timeout=10)
        received = hub.received
        snap = pub.publish(_capture(_ui_after(GOLDEN_RECORDS[0], 7)))
        wait_until(lambda: hub.received > received, "a datagram on the new socket")
        assert hub.snapshot["seq"] == snap["seq"]
    finally:
        pub.close()


def test_the_only_changes_the_page_accepts_are_a_pin_a_login_and_names(tmp_path):
    """Read-only for everyone: every other route is GET; none of these touches the game in
    progress (the PIN is shown on the OLED only, names are offered at the next setup, a
    finished game's names are corrected in its record)."""
    app = make_app(tmp_path, None, tmp_path / "names.json")
    posts = {r.resource.canonical for r in app.router.routes() if r.method not in ("GET", "HEAD")}
    assert posts == {"/pin", "/login", "/players", "/game/{gid}/names"}


def test_a_games_names_are_corrected_with_the_pin(site):
    shown = []
    listener = ControlListener(site.feed, shown.append)
    origin = {"Origin": site.url, "Content-Type": "application/x-www-form-urlencoded"}
    library = Library(site.store)
    rows, _ = library.games(None, None, 1, 0)
    gid = rows[0]["id"]
    try:
        status, _, _ = request(site.url + f"/game/{gid}/names", b"first=X&second=Y", origin)
        assert status == 403
        request(site.url + "/pin", b"", origin)
        wait_until(lambda: shown, "the PIN")
        _, headers, _ = request(site.url + "/login", f"pin={shown[0].pin}".encode(), origin)
        cookie = headers["Set-Cookie"].split(";")[0]
        status, _, body = request(site.url + f"/game/{gid}/names", b"first=Zoe&second=zoe",
                                  {**origin, "Cookie": cookie})
        assert status == 400 and "two different names" in body
        status, _, _ = request(site.url + f"/game/{gid}/names", b"first=Zoe&second=Yuri",
                               {**origin, "Cookie": cookie})
        assert status == 303
        rows, total = library.games("Zoe", None, 10, 0)
        assert total == 1 and [p["name"] for p in rows[0]["players"]] == ["Zoe", "Yuri"]
        record = json.loads((site.store / "records" / rows[0]["record"]).read_text())
        assert record["players"] == ["Zoe", "Yuri"]
        status, _, page = request(site.url + f"/game/{gid}?msg=renamed", None, {"Cookie": cookie})
        assert "are corrected" in page and 'value="Zoe"' in page
    finally:
        listener.close()


def test_a_full_disk_is_said_in_the_pages_words_and_changes_nothing(site, monkeypatch):
    """The box's card is full: saving names or correcting a game's names answers with what
    went wrong and that nothing changed, never the page's generic internal error."""
    import errno

    from firmware_py import disk
    shown = []
    listener = ControlListener(site.feed, shown.append)
    origin = {"Origin": site.url, "Content-Type": "application/x-www-form-urlencoded"}
    gid = Library(site.store).games(None, None, 1, 0)[0][0]["id"]
    record = next((site.store / "records").glob(f"{gid}.json")).read_bytes()
    try:
        request(site.url + "/pin", b"", origin)
        wait_until(lambda: shown, "the PIN")
        _, headers, _ = request(site.url + "/login", f"pin={shown[0].pin}".encode(), origin)
        cookie = {**origin, "Cookie": headers["Set-Cookie"].split(";")[0]}

        def full(*args, **kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        monkeypatch.setattr(disk, "_write_temporary", full)
        status, _, body = request(site.url + "/players", b"names=Zoe%0AYuri", cookie)
        assert status == 503 and "the names could not be written (disk full" in body
        assert "nothing was changed" in body and "internal error" not in body
        status, _, body = request(site.url + f"/game/{gid}/names", b"first=Zoe&second=Yuri",
                                  cookie)
        assert status == 503 and "record could not be written (disk full" in body
        assert (site.store / "records" / f"{gid}.json").read_bytes() == record
        assert not site.names.exists()
    finally:
        listener.close()
