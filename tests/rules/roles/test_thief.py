"""The Thief (001): first of all on the first night he takes the card of any player he chooses;
the robbed plays on as a plain Villager, even if he was a wolf."""

from tests.rules.driver import Game

# seats: 0 wolf, 1 thief, 2 seer, 3 cupid, 4 villager, 5 villager, 6 villager
DEAL = ["werewolf", "thief", "seer", "cupid", "villager", "villager", "villager"]


def test_the_thief_wakes_first_of_all_on_the_first_night_only():
    game = Game(DEAL)
    assert game.phase == "night.thief"
    assert game.prompts(1)[0]["choices"] == [0, 2, 3, 4, 5, 6]
    game.timeout()
    assert game.phase == "night.cupid"
    game.timeout()
    game.night()
    game.elect(None)
    game.vote_out(None)
    assert game.phase == "night.seer"  # no thief, no cupid on night 2


def test_the_thief_takes_the_card_and_the_robbed_becomes_a_plain_villager():
    game = Game(DEAL)
    game.act(1, "thief.steal", [2])
    assert game.state.roles[1] == "seer" and game.state.roles[2] == "villager"
    assert game.events("role")[-2:] == [{"kind": "role", "to": [1], "role": "seer"},
                                        {"kind": "role", "to": [2], "role": "villager"}]
    assert game.view(1)["me"]["role"] == "seer" and game.view(2)["me"]["role"] == "villager"


def test_a_thief_who_steals_cupid_links_that_same_night():
    game = Game(DEAL)
    game.act(1, "thief.steal", [3])
    assert game.phase == "night.cupid" and game.prompts(1)[0]["action"] == "cupid.link"


def test_a_thief_who_steals_a_wolf_joins_the_pack_and_the_robbed_leaves_it():
    game = Game(DEAL)
    game.act(1, "thief.steal", [0])
    assert game.events("wolves")[-1] == {"kind": "wolves", "to": [1], "wolves": [1]}
    assert game.view(0)["wolves"] is None and game.view(1)["wolves"] == [1]
    game.timeout()  # cupid
    game.timeout()  # seer
    assert [p["action"] for p in game.prompts(1)] == ["wolves.point"] and game.prompts(0) == []


def test_a_thief_who_steals_nothing_is_a_plain_villager():
    game = Game(DEAL)
    game.timeout()
    assert game.state.roles[1] == "thief" and game.events("role")[-1]["to"] == [6]
