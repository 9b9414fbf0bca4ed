"""The web page's systemd unit: verified by systemd-analyze in a staging root, sandboxed,
with the network the game service's unit does not have, sharing the live feed folder."""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import pytest

from test_systemd_units import HOST_UNIT_DIRS, SYSTEMD, one, parse_unit, values

WEB = SYSTEMD / "patchwork-companion-web.service"
GAME = SYSTEMD / "patchwork-companion.service"
needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                   reason="systemd-analyze not installed")


def _root(tmp_path, text: str):
    host = next((d for d in HOST_UNIT_DIRS if (d / "sysinit.target").exists()), None)
    if host is None:
        pytest.skip("no stock systemd units on this machine")
    root = tmp_path / "root"
    shutil.copytree(host, root / "usr/lib/systemd/system", symlinks=True)
    stub = root / shlex.split(one(parse_unit(text), "Service", "ExecStart"))[0].lstrip("/")
    stub.parent.mkdir(parents=True)
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    (root / "etc/systemd/system").mkdir(parents=True)
    (root / "etc/systemd/system" / WEB.name).write_text(text)
    return root


@needs_analyze
def test_web_unit_verifies_and_its_exposure_is_low(tmp_path):
    root = _root(tmp_path, WEB.read_text())
    done = subprocess.run(["systemd-analyze", "verify", f"--root={root}", "--man=no",
                           "--generators=no", f"/etc/systemd/system/{WEB.name}"],
                          capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    if "unrecognized option" in output:
        pytest.skip(output.strip())
    assert done.returncode == 0 and "patchwork" not in output, output
    done = subprocess.run(["systemd-analyze", "security", "--offline=yes", f"--root={root}",
                           f"/etc/systemd/system/{WEB.name}"],
                          capture_output=True, text=True, timeout=120)
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", done.stdout + done.stderr)
    if match is None:
        pytest.skip("no offline security analysis here")
    assert float(match.group(1)) <= 3.0, done.stdout


def test_web_unit_has_the_network_and_the_game_unit_does_not():
    web, game = parse_unit(WEB.read_text()), parse_unit(GAME.read_text())
    assert "AF_INET" in one(web, "Service", "RestrictAddressFamilies")
    assert not values(web, "Service", "PrivateNetwork")
    assert one(game, "Service", "PrivateNetwork") == "yes"
    assert one(game, "Service", "RestrictAddressFamilies") == "AF_UNIX"
    assert one(web, "Service", "ExecStart").split()[1:3] == ["web", "--config"]


def test_both_units_share_and_keep_the_feed_folder():
    """The game service's unit makes and keeps the feed folder (group patchwork may
    write it); the web page's unit, another user of that group, only names it."""
    web, game = parse_unit(WEB.read_text()), parse_unit(GAME.read_text())
    assert one(game, "Service", "RuntimeDirectory") == "patchwork-companion"
    assert one(game, "Service", "RuntimeDirectoryPreserve") == "yes"
    assert one(game, "Service", "RuntimeDirectoryMode") == "0770"
    assert one(game, "Service", "User") == "patchwork"
    assert one(web, "Service", "Group") == "patchwork"
    assert "-/run/patchwork-companion" in one(web, "Service", "ReadWritePaths").split()
