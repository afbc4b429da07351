"""The werewolves know each other and choose a victim together: each points and may change;
unanimous = settled at once; at the deadline the plurality wins, a tie by lot; nobody pointed =
nobody dies."""

import pytest

from rules import IllegalTarget, NotYourTurn
from tests.rules.driver import EIGHT_SEATS, Game

# seats: 0 wolf, 1 seer, 2 witch, 3 hunter, 4 cupid, 5 villager, 6 wolf, 7 villager
DEAL = EIGHT_SEATS
TWELVE = ["werewolf", "villager", "villager", "werewolf", "villager", "villager", "werewolf",
          "villager", "villager", "villager", "villager", "villager"]


def to_wolves(game: Game) -> None:
    game.timeout()
    game.timeout()
    assert game.phase == "night.wolves"


def test_the_wolves_recognise_each_other():
    game = Game(DEAL)
    assert {"kind": "wolves", "to": [0, 6], "wolves": [0, 6]} in game.log
    assert game.view(0)["wolves"] == [0, 6] and game.view(6)["wolves"] == [0, 6]
    assert game.view(1)["wolves"] is None


def test_a_unanimous_pack_settles_the_victim_at_once():
    game = Game(DEAL)
    to_wolves(game)
    game.act(0, "wolves.point", [5])
    assert game.phase == "night.wolves"
    game.act(6, "wolves.point", [5])
    assert game.phase == "night.witch"
    assert game.events("witch_victim")[-1] == {"kind": "witch_victim", "to": [2], "victim": 5}


def test_with_hidden_cards_a_unanimous_pack_still_waits_for_its_deadline():
    # its length would tell how many wolves still point, so whose hidden death was a wolf's
    game = Game(DEAL, rules={"reveal_night_deaths": "no"})
    to_wolves(game)
    game.act(0, "wolves.point", [5])
    game.act(6, "wolves.point", [5])
    assert game.phase == "night.wolves"
    game.timeout()
    assert game.events("witch_victim")[-1]["victim"] == 5


# A card that may make a seat a wolf unseen: the table cannot count the pack even with every
# card shown at death; the Thief who steals only swaps a wolf for a wolf.
GROWS = [(["werewolf", "infect_father", "seer", "villager", "villager", "villager"], {}, (),
          True),
         (["werewolf", "thief", "seer", "villager", "villager", "villager"],
          {"thief_mode": "extra_cards", "thief_extra_cards": "two_villagers"},
          ["villager", "villager"], True),
         (["werewolf", "thief", "seer", "villager", "villager", "villager"],
          {"thief_mode": "steal"}, (), False)]


@pytest.mark.parametrize("deal, rules, aside, waits", GROWS)
def test_where_a_card_may_grow_the_pack_unseen_a_unanimous_pack_waits_for_its_deadline(
        deal, rules, aside, waits):
    game = Game(deal, rules=rules, aside=list(aside))
    while game.phase != "night.wolves":
        game.timeout()
    for wolf in (0, 1) if deal[1] == "infect_father" else (0,):
        game.act(wolf, "wolves.point", [3])
    assert (game.phase == "night.wolves") is waits


def test_a_wolf_may_change_his_mind_and_only_the_wolves_see_it():
    game = Game(DEAL)
    to_wolves(game)
    game.act(0, "wolves.point", [5])
    game.act(6, "wolves.point", [7])
    game.act(0, "wolves.point", [3])
    game.act(0, "wolves.point", [])
    assert [(e["seat"], e["target"], e["to"]) for e in game.events("pointed")] == [
        (0, 5, [0, 6]), (6, 7, [0, 6]), (0, 3, [0, 6]), (0, None, [0, 6])]
    assert game.view(6)["pointing"] == {"6": 7}
    assert game.view(5)["pointing"] is None
    game.act(0, "wolves.point", [7])
    assert game.phase == "night.witch"


def test_at_the_deadline_the_player_pointed_at_most_is_the_victim():
    game = Game(TWELVE)
    game.act(0, "wolves.point", [1])
    game.act(3, "wolves.point", [1])
    game.act(6, "wolves.point", [2])
    game.timeout()
    assert game.deaths() == [(1, "wolves")]


@pytest.mark.parametrize("seed", range(8))
def test_a_tie_at_the_deadline_is_drawn_by_lot(seed):
    game = Game(DEAL, seed=seed)
    to_wolves(game)
    game.act(0, "wolves.point", [5])
    game.act(6, "wolves.point", [7])
    game.timeout()
    game.timeout()  # witch
    assert game.deaths() in ([(5, "wolves")], [(7, "wolves")])


def test_the_lot_draws_each_tied_player_for_some_seed():
    victims = set()
    for seed in range(20):
        game = Game(DEAL, seed=seed)
        to_wolves(game)
        game.act(0, "wolves.point", [5])
        game.act(6, "wolves.point", [7])
        game.timeout()
        victims.add(game.state.memo["night"]["victim"])
    assert victims == {5, 7}


def test_when_nobody_points_nobody_is_eaten():
    game = Game(DEAL)
    game.night(link=[5, 7], inspect=0, victim=None)
    assert game.deaths() == [] and game.phase == "day.election"


def test_a_pointing_withdrawn_before_the_deadline_does_not_count():
    game = Game(DEAL)
    to_wolves(game)
    game.act(0, "wolves.point", [5])
    game.act(0, "wolves.point", [])
    game.timeout()
    assert game.state.memo["night"]["victim"] is None


def test_wolves_may_target_only_living_non_wolves():
    game = Game(DEAL)
    to_wolves(game)
    prompt = game.prompts(0)[0]
    assert prompt["action"] == "wolves.point" and prompt["choices"] == [1, 2, 3, 4, 5, 7]
    with pytest.raises(IllegalTarget):
        game.act(0, "wolves.point", [6])
    with pytest.raises(IllegalTarget):
        game.act(0, "wolves.point", [0])


def test_the_dead_are_not_on_the_menu():
    game = Game(DEAL)
    game.night(victim=5)
    game.elect(None)
    game.vote_out(None)
    game.timeout()  # seer
    assert 5 not in game.prompts(0)[0]["choices"]


def test_only_living_wolves_point():
    game = Game(TWELVE)
    game.night(victim=1)
    game.elect(None)
    game.vote_out(0)
    assert game.phase == "night.wolves"
    with pytest.raises(NotYourTurn):
        game.act(0, "wolves.point", [2])
    with pytest.raises(NotYourTurn):
        game.act(1, "wolves.point", [2])
    game.act(3, "wolves.point", [2])
    game.act(6, "wolves.point", [2])
    assert game.phase == "day.discussion"  # two living wolves agreeing is unanimous


def test_the_victim_stays_alive_and_unrevealed_until_dawn():
    game = Game(DEAL)
    to_wolves(game)
    game.act(0, "wolves.point", [5])
    game.act(6, "wolves.point", [5])
    assert game.phase == "night.witch"
    assert game.view(5)["me"]["alive"] is True and game.view(7)["seats"][5]["role"] is None
    assert game.view(5)["channels"] == []
