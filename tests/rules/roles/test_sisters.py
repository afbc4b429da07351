"""The Two Sisters: dealt together, they know each other from the deal; nothing else changes."""
from rules import Settings, roles_in_play
from tests.rules.driver import Game

DEAL = ["werewolf", "sisters", "sisters", "seer", "villager", "villager"]


def test_the_sisters_learn_each_other_at_the_deal_and_only_they_do():
    g = Game(DEAL)
    assert g.events("sisters") == [{"kind": "sisters", "to": [1, 2], "sisters": [1, 2]}]
    assert g.view(1)["sisters"] == g.view(2)["sisters"] == [1, 2]
    assert g.view(0)["sisters"] is None and g.view(3)["sisters"] is None


def test_a_sister_s_death_does_not_take_the_other():
    g = Game(DEAL)
    g.night(inspect=0, victim=1)
    assert [seat for seat, _ in g.deaths()] == [1]
    assert g.state.alive[2]


def test_the_sisters_are_two_cards_of_the_village():
    settings = Settings.from_json({"roles": ["seer", "sisters"]})
    assert roles_in_play(8, settings) == {"werewolf": 2, "seer": 1, "sisters": 2, "villager": 3}
