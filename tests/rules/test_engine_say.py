"""Chat: by day the living talk to all; by night the wolves among themselves; the dead among
themselves at any time. The dead read only the dead channel and public events."""

import pytest

from rules import BadFrame, NotYourTurn
from tests.rules.driver import Game

# seats: 0 wolf, 1 seer, 2 witch, 3 hunter, 4 cupid, 5 villager, 6 wolf, 7 villager
DEAL = ["werewolf", "seer", "witch", "hunter", "cupid", "villager", "werewolf", "villager"]


def first_day_with_7_dead() -> Game:
    game = Game(DEAL)
    game.night(victim=7)
    assert game.phase == "day.election"
    return game


def test_by_day_the_living_talk_to_everybody():
    game = first_day_with_7_dead()
    assert game.say(1, "  hello  ") == [{"kind": "chat", "to": None, "channel": "day", "seat": 1,
                                         "name": "Omar", "text": "hello", "ts": game.now}]
    assert game.view(7)["chat"]["day"][0]["text"] == "hello"


def test_by_night_the_wolves_talk_among_the_living_wolves():
    game = Game(DEAL)
    assert game.say(6, "who?")[0]["to"] == [0, 6]
    assert game.view(0)["chat"] == {"wolves": [{"channel": "wolves", "seat": 6, "name": "Rana",
                                                "text": "who?", "ts": game.now}]}
    assert game.view(1)["chat"] == {}
    assert game.view(0)["channels"] == ["wolves"] and game.view(1)["channels"] == []


def test_by_night_a_living_villager_keeps_quiet():
    game = Game(DEAL)
    with pytest.raises(NotYourTurn) as refused:
        game.say(1, "I am the seer")
    assert "night.cupid" in str(refused.value)


def test_a_line_meant_for_another_channel_than_the_seat_s_is_refused():
    game = Game(DEAL)
    assert game.say(0, "the pack", channel="wolves")[0]["channel"] == "wolves"
    game.night(victim=7)
    assert game.phase == "day.election"
    before = game.state
    with pytest.raises(NotYourTurn) as refused:
        game.say(0, "still the pack?", channel="wolves")
    assert "'day'" in str(refused.value) and game.state is before
    assert game.say(0, "good morning", channel="day")[0]["to"] is None
    with pytest.raises(BadFrame):
        game.say(0, "hi", channel=["day"])


def test_the_dead_talk_among_themselves_by_day_and_by_night():
    game = first_day_with_7_dead()
    assert game.say(7, "it was 0")[0] == {"kind": "chat", "to": [7], "channel": "dead",
                                          "seat": 7, "name": "Tariq", "text": "it was 0",
                                          "ts": game.now}
    assert game.view(7)["channels"] == ["dead"]
    assert "dead" not in game.view(0)["chat"] and "dead" not in game.view(1)["chat"]
    game.elect(None)
    game.vote_out(5)
    assert game.say(5, "hi 7")[0]["to"] == [5, 7]  # at night too


def test_a_dead_wolf_no_longer_reads_the_wolves():
    game = Game(["werewolf", "villager", "villager", "werewolf", "villager", "villager",
                 "villager", "villager"])
    game.say(3, "first night")
    assert game.view(0)["chat"]["wolves"][0]["text"] == "first night"
    game.night(victim=1)
    game.elect(None)
    game.vote_out(0)
    assert game.say(3, "alone now")[0]["to"] == [3]
    # He keeps what he read while alive, nothing written since.
    assert [line["text"] for line in game.view(0)["chat"]["wolves"]] == ["first night"]
    assert game.view(0)["channels"] == ["dead"]


def test_a_dead_player_reads_the_dead_lines_written_since_his_death_only():
    game = first_day_with_7_dead()
    game.say(7, "before")
    game.elect(None)
    game.vote_out(5)
    assert [line["text"] for line in game.view(5)["chat"].get("dead", [])] == []
    game.say(5, "after")
    assert [line["text"] for line in game.view(7)["chat"]["dead"]] == ["before", "after"]


@pytest.mark.parametrize("text", ["", "   ", "x" * 501, None, 42])
def test_a_chat_line_is_one_to_five_hundred_characters(text):
    game = first_day_with_7_dead()
    with pytest.raises(BadFrame):
        game.say(1, text)
    assert game.state.chat == []


def test_five_hundred_characters_is_allowed():
    game = first_day_with_7_dead()
    assert game.say(1, "x" * 500)[0]["text"] == "x" * 500
