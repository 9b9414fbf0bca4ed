"""What a new user expects of the command: --version, -v/--log-level, journald priorities,
and textual needed only by `sim` (an extra), with a clear message when it is missing."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from firmware_py.cli import main, version
from firmware_py.logs import level_of, priority, setup

REPO = Path(__file__).resolve().parents[2]


def test_version(capsys):
    try:
        main(["--version"])
    except SystemExit as exc:
        assert exc.code == 0
    assert capsys.readouterr().out.strip() == f"patchwork-companion {version()}"


def test_verbosity_options():
    assert level_of(0, None) == logging.WARNING
    assert level_of(1, None) == logging.INFO and level_of(2, None) == logging.DEBUG
    assert level_of(2, "error") == logging.ERROR
    assert level_of(0, None, logging.INFO) == logging.INFO
    assert [priority(x) for x in (logging.CRITICAL, logging.ERROR, logging.WARNING, logging.INFO,
                                  logging.DEBUG)] == [2, 3, 4, 6, 7]


def test_log_lines_carry_syslog_priorities_under_journald(tmp_path, monkeypatch):
    with open(tmp_path / "stream", "w+") as stream:
        st = os.fstat(stream.fileno())
        monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")
        setup(logging.INFO, stream)
        log = logging.getLogger("firmware_py.test")
        log.warning("the sensor is offline")
        log.info("ready")
        log.debug("not shown")
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("loop error")
        stream.flush()
        lines = (tmp_path / "stream").read_text().splitlines()
    assert lines[:2] == ["<4>firmware_py.test: the sensor is offline", "<6>firmware_py.test: ready"]
    assert lines[2] == "<3>firmware_py.test: loop error"
    assert all(line.startswith("<3>") for line in lines[3:]) and "ValueError: boom" in lines[-1]


def test_plain_log_lines_elsewhere(tmp_path, monkeypatch):
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    with open(tmp_path / "stream", "w+") as stream:
        setup(logging.WARNING, stream)
        logging.getLogger("firmware_py.test").warning("careful")
        stream.flush()
    assert (tmp_path / "stream").read_text() == "WARNING firmware_py.test: careful\n"


def test_a_command_under_systemd_logs_with_priorities(tmp_path):
    """The real command, its standard error being "the journal stream"."""
    err = tmp_path / "stderr"
    with open(err, "wb") as fh:
        st = os.fstat(fh.fileno())
        env = {**os.environ, "PYTHONPATH": str(REPO), "JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}",
               "XDG_RUNTIME_DIR": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)}
        done = subprocess.run([sys.executable, "-m", "firmware_py.cli", "web", "--address",
                               "192.0.2.1", "--port", "8099"], env=env, stderr=fh, timeout=60)
    text = err.read_text()
    assert done.returncode == 1
    assert "<6>firmware_py.web.server: web page on http://192.0.2.1:8099/" in text
    assert "<3>firmware_py.web.server: cannot listen on 192.0.2.1 port 8099" in text
    assert "Traceback" not in text


def test_sim_without_textual_says_how_to_get_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "textual", None)      # as if not installed
    assert main(["sim"]) == 2
    err = capsys.readouterr().err
    assert "needs textual" in err and "patchwork-companion[sim]" in err


def test_everything_but_sim_works_without_textual():
    code = ("import sys; sys.modules['textual'] = None\n"
            "import firmware_py.sim.demo, firmware_py.service.assembly, firmware_py.web.server, firmware_py.cli\n"
            "from firmware_py.commands import history, stats, export, backup, web\n"
            "firmware_py.cli.build_parser().parse_args(['demo'])\n")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
