"""The token sensor's channel map (``sensor.map``): its own parser, sensor wording."""
from __future__ import annotations

import pytest

from firmware_py.hw.channel_map import MAX_CHANNEL, ChannelMap


def test_an_empty_map_is_the_identity_up_to_the_last_space():
    m = ChannelMap.parse("", 29)
    assert m.spaces(frozenset({0, 5, 29, 30, 53})) == frozenset({0, 5, 29})
    assert m.needs() == 30 and m.channel_of(7) == 7


def test_ranges_run_either_way_and_map_channels_to_spaces():
    m = ChannelMap.parse("53-0", 53)
    assert m.channel_of(0) == 53 and m.channel_of(53) == 0
    assert m.spaces(frozenset({53, 0, 10})) == frozenset({0, 53, 43})
    assert m.needs() == 54


def test_channels_the_map_does_not_name_are_left_out():
    m = ChannelMap.parse("0-14, 30-44", 29)
    assert m.spaces(frozenset({14, 15, 29, 30, 44, 45})) == frozenset({14, 15, 29})
    assert m.needs() == 45


@pytest.mark.parametrize("spec, words", [
    ("0-52", "gives 53 channels but the board has 54 spaces (0..53)"),
    ("0-26, 26-52", "sensor channel 26 is given to both space 26 and space 27"),
    ("0-x", "bad channel range '0-x'"),
    (f"0-52, {MAX_CHANNEL + 1}", f"sensor channel {MAX_CHANNEL + 1} for space 53 is outside 0..{MAX_CHANNEL}"),
])
def test_a_bad_map_says_what_is_wrong_in_the_sensors_words(spec, words):
    with pytest.raises(ValueError) as err:
        ChannelMap.parse(spec, 53)
    assert words in str(err.value) and "LED" not in str(err.value)


def test_the_config_checks_the_sensor_map_with_the_sensors_parser(tmp_path):
    from firmware_py.config import ConfigError, load_config
    path = tmp_path / "config.toml"
    path.write_text('backend = "sim"\n[sensor]\nmap = "1-53"\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert "sensor.map: sensor map '1-53' gives 53 channels but the board has 54" in str(err.value)


def test_a_map_may_be_a_list_of_channels():
    m = ChannelMap.parse(list(range(29, -1, -1)), 29)
    assert m.channel_of(0) == 29 and m.spaces(frozenset({29})) == frozenset({0})
    with pytest.raises(ValueError, match="must be a whole number"):
        ChannelMap.parse(list(range(29)) + ["x"], 29)
