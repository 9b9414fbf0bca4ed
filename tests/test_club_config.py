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
    cfg = validate({"club": {"enabled": True, "host": "10.0.0.2", "port": 8883, "tls": True,
                             "username": "box", "password_file": str(secret), "club": "tuesday",
                             "table": "t7"}})
    settings = ClubSettings.from_config(cfg)
    assert (settings.host, settings.port, settings.tls, settings.club, settings.table) == \
        ("10.0.0.2", 8883, True, "tuesday", "t7")
    with pytest.raises(ClubError, match="is empty"):
        ClubBridge(settings, tmp_path / "out.sqlite")
