"""The [club] config section: off by default, each key checked, no default password."""
from __future__ import annotations

import pytest

from firmware_py.club.bridge import ClubBridge, ClubError, ClubSettings
from firmware_py.config import ConfigError, load_config, validate


def test_club_mode_is_off_by_default():
    cfg = load_config(None)
    assert cfg["club"]["enabled"] is False and cfg["club"]["username"] == ""


def test_a_user_name_without_a_password_file_is_refused():
    with pytest.raises(ConfigError) as caught:
        validate({"club": {"enabled": True, "username": "box"}})
    assert caught.value.problems == ["club.password_file: a club.username needs a password file"]


def test_a_missing_password_file_is_named(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError) as caught:
        validate({"club": {"enabled": True, "username": "box", "password_file": str(missing)}})
    assert caught.value.problems == [f"club.password_file: {missing} is not a readable file"]


@pytest.mark.parametrize("name", ["", "a/b", "a+b", "#", "x" * 33, "tables at 7"])
def test_club_and_table_names_cannot_hold_topic_characters(name):
    with pytest.raises(ConfigError) as caught:
        validate({"club": {"table": name}})
    assert caught.value.problems[0].startswith("club.table: ")


def test_settings_from_config_and_an_empty_password_file(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("\n")
    secret.chmod(0o640)
    cfg = validate({"club": {"enabled": True, "host": "10.0.0.2", "port": 8883, "tls": True,
                             "username": "box", "password_file": str(secret), "club": "tuesday",
                             "table": "t7"}})
    settings = ClubSettings.from_config(cfg)
    assert (settings.host, settings.port, settings.tls, settings.club, settings.table) == \
        ("10.0.0.2", 8883, True, "tuesday", "t7")
    with pytest.raises(ClubError, match="is empty"):
        ClubBridge(settings, tmp_path / "out.sqlite")


def test_config_check_refuses_a_password_file_every_user_may_read(tmp_path):
    secret = tmp_path / "club-password"
    secret.write_text("quilt\n")
    secret.chmod(0o644)
    with pytest.raises(ConfigError) as caught:
        validate({"club": {"enabled": True, "username": "box", "password_file": str(secret)}})
    assert caught.value.problems == [f"club.password_file: {secret} is readable by every user "
                                     f"of this machine (mode 644); chmod o-rwx {secret}"]
    secret.chmod(0o640)
    validate({"club": {"enabled": True, "username": "box", "password_file": str(secret)}})


def test_a_password_file_under_the_home_folder_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "club-password").write_text("quilt\n")
    (tmp_path / "club-password").chmod(0o600)
    validate({"club": {"enabled": True, "username": "box", "password_file": "~/club-password"}})
    settings = ClubSettings("127.0.0.1", 1883, "c", "t", username="box",
                            password_file="~/club-password")
    assert settings.password() == "quilt"


def test_a_damaged_outbox_is_kept_aside_and_a_new_queue_starts(tmp_path):
    from firmware_py.club.outbox import Outbox
    path = tmp_path / "club-outbox.sqlite"
    garbage = b"not a database, a damaged SD card " * 200
    path.write_bytes(garbage)
    box = Outbox(path)
    box.add("g1", 1, ["advance"], False, [("patchwork/c/t/event", b"{}")])
    assert len(box) == 1
    box.close()
    kept = list(tmp_path.glob("club-outbox.sqlite.damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == garbage


def test_an_outbox_that_cannot_be_created_is_a_clear_error(tmp_path):
    blocker = tmp_path / "state"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(ClubError) as caught:
        ClubBridge(ClubSettings("127.0.0.1", 1883, "c", "t"), blocker / "club-outbox.sqlite")
    assert "club outbox" in str(caught.value) and str(blocker) in str(caught.value)


def test_a_ca_file_that_is_not_a_certificate_is_a_clear_error(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate")
    settings = ClubSettings("127.0.0.1", 8883, "c", "t", tls=True, ca_file=str(ca))
    with pytest.raises(ClubError, match="club.ca_file: cannot load"):
        ClubBridge(settings, tmp_path / "out.sqlite")


def test_club_commands_say_what_is_wrong_without_a_traceback(tmp_path, capsys):
    from firmware_py.cli import main
    blocker = tmp_path / "results"
    blocker.write_text("a file where the results folder should be")
    cfg = tmp_path / "club.toml"
    cfg.write_text('backend = "sim"\n[club]\nenabled = true\nhost = "127.0.0.1"\nport = 1\n')
    assert main(["club", "serve", "--config", str(cfg), "--port", "1", "--results", str(blocker)]) == 2
    assert capsys.readouterr().err.strip() == f"club serve: cannot keep the results in {blocker}: File exists"
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate")
    cfg.write_text(f'backend = "sim"\n[club]\nenabled = true\ntls = true\nca_file = "{ca}"\n')
    assert main(["club", "simulate", "--config", str(cfg), "--boxes", "1", "--seconds", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{cfg}: club.ca_file: cannot load {ca}") and "Traceback" not in err


def test_club_serve_on_a_busy_port_says_so_and_never_claims_to_serve(tmp_path, capsys):
    import socket
    from firmware_py.cli import main
    cfg = tmp_path / "club.toml"
    cfg.write_text('backend = "sim"\n[club]\nenabled = true\nhost = "127.0.0.1"\nport = 1\n')
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["club", "serve", "--config", str(cfg), "--port", str(port),
                     "--results", str(tmp_path / "results")]) == 2
    out, err = capsys.readouterr()
    assert "club scoreboard of" not in out
    line = [l for l in err.splitlines() if l.startswith("club serve: cannot serve on")]
    assert line and line[0].startswith(f"club serve: cannot serve on 127.0.0.1:{port}") and "in use" in line[0]
    assert "Traceback" not in err
