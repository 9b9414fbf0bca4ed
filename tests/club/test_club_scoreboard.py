"""`club serve` as a user runs it: a real Mosquitto, simulated boxes, the page in
a real headless Chromium."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import needs
from mqtt_broker import USER, Broker, free_port

pytestmark = needs("chromium")
SHOTS = Path(__file__).resolve().parents[1] / "screenshots"


def _get(port: int, path: str) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return r.read()


def _first_row(driver) -> str:
    """The first table row's text, read in one go (the page replaces rows on each push)."""
    return driver.execute_script(
        "const r = document.querySelector('#tables tbody tr'); return r ? r.innerText : '';")


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1100,900"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def test_the_scoreboard_page_shows_every_table_live(tmp_path):
    broker = Broker(tmp_path).start()
    cfg = tmp_path / "club.toml"
    cfg.write_text(f'backend = "sim"\n[club]\nenabled = true\nhost = "127.0.0.1"\nport = {broker.port}\nclub = "club1"\n'
                   f'username = "{USER}"\npassword_file = "{broker.password_file}"\n')
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    serve = subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "club", "serve", "--config", str(cfg),
                              "--port", str(port), "--results", str(tmp_path / "results")], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    boxes = subprocess.Popen([sys.executable, "-m", "firmware_py.cli", "club", "simulate", "--config",
                              str(cfg), "--boxes", "3", "--rate", "20", "--seconds", "6"], env=env,
                             stdout=subprocess.PIPE, text=True)
    driver = None
    try:
        assert "club scoreboard of 'club1'" in serve.stdout.readline()
        deadline = time.monotonic() + 15
        board = {}
        while time.monotonic() < deadline:
            try:
                board = json.loads(_get(port, "/api/board"))
                if len(board["tables"]) == 3 and board["finished"] >= 1:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        assert [t["table"] for t in board["tables"]] == ["sim-01", "sim-02", "sim-03"]
        assert all(t["online"] for t in board["tables"]) and board["broker_online"]
        driver = _browser()
        driver.get(f"http://127.0.0.1:{port}/")
        from selenium.webdriver.common.by import By
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(driver.find_elements(By.CSS_SELECTOR, "#tables tbody tr")) < 3:
            time.sleep(0.1)
        first = _first_row(driver)
        time.sleep(1.0)
        later = _first_row(driver)
        assert first != later                      # pushed live, no reload
        assert driver.find_elements(By.CSS_SELECTOR, "#standings tbody tr")
        assert driver.find_elements(By.CSS_SELECTOR, "#finished tbody tr")    # the finished games
        SHOTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(SHOTS / "club-scoreboard-live.png"))
        boxes.communicate(timeout=30)             # the boxes stop: offline
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and "(the box stopped" not in _first_row(driver):
            time.sleep(0.2)
        assert "(the box stopped less than a minute ago)" in _first_row(driver)
        driver.save_screenshot(str(SHOTS / "club-scoreboard-offline.png"))
        csv_text = _get(port, "/results.csv").decode()
        records = _get(port, "/records.jsonl").decode().splitlines()
        assert len(csv_text.splitlines()) == len(records) + 1 and records
        assert all(json.loads(r)["format"] == "patchwork-game-record/1" for r in records)
        import sqlite3
        with sqlite3.connect(tmp_path / "results" / "scoreboard.sqlite") as db:
            assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == len(records)
    finally:
        if driver:
            driver.quit()
        boxes.kill()
        serve.send_signal(signal.SIGINT)
        serve.wait(10)
        broker.kill()
    exported = subprocess.run([sys.executable, "-m", "firmware_py.cli", "club", "export", "--results",
                               str(tmp_path / "results")], env=env, capture_output=True, text=True)
    assert exported.returncode == 0 and exported.stdout.splitlines() == csv_text.splitlines()
