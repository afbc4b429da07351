"""The day: first-day mayor election (plurality, tie by lot); discussion that ends early when a
majority of the living ask to vote; public elimination vote (the mayor counts twice); a tie is
broken by the mayor; no mayor or no votes = nobody eliminated; the eliminated card is revealed."""

import pytest

from rules import IllegalTarget, NotYourTurn
from tests.rules.driver import EIGHT_SEATS, Game

# seats: 0 wolf, 1 seer, 2 witch, 3 hunter, 4 cupid, 5 villager, 6 wolf, 7 villager
DEAL = EIGHT_SEATS


def day_one() -> Game:
    game = Game(DEAL)
    game.night(victim=None)
    assert game.phase == "day.election"
    return game


def to_vote(game: Game, mayor: int | None) -> None:
    game.elect(mayor)
    game.ask_to_vote()
    assert game.phase == "day.vote"


def test_the_first_day_elects_the_mayor_by_most_votes():
    game = day_one()
    for voter, choice in [(0, 5), (1, 5), (2, 7), (3, 5)]:
        game.act(voter, "mayor.elect", [choice])
    game.timeout()
    result = game.events("vote_result")[-1]
    assert result == {"kind": "vote_result", "to": None, "phase": "day.election", "target": 5,
                      "tally": {"5": 3, "7": 1}, "tie": []}
    assert game.events("mayor")[-1] == {"kind": "mayor", "to": None, "seat": 5,
                                        "how": "elected"}
    assert game.view(0)["mayor"] == 5


def test_the_election_ends_once_every_living_player_has_voted():
    game = day_one()
    game.elect(2)
    assert game.phase == "day.discussion" and game.state.mayor == 2


@pytest.mark.parametrize("seed", range(6))
def test_an_election_tie_is_drawn_by_lot(seed):
    game = Game(DEAL, seed=seed)
    game.night(victim=None)
    game.act(0, "mayor.elect", [1])
    game.act(1, "mayor.elect", [2])
    game.timeout()
    result = game.events("vote_result")[-1]
    assert result["tie"] == [1, 2] and result["target"] in (1, 2)
    assert game.state.mayor == result["target"]


def test_an_election_nobody_votes_in_leaves_the_village_without_mayor():
    game = day_one()
    game.act(0, "mayor.elect", [])
    game.timeout()
    assert game.state.mayor is None and game.events("mayor") == []
    assert game.events("vote_result")[-1]["target"] is None


def test_the_mayor_is_elected_on_the_first_day_only():
    game = day_one()
    to_vote(game, None)
    game.timeout()
    game.night(victim=None)
    assert game.phase == "day.discussion"


def test_a_candidate_may_vote_for_himself():
    game = day_one()
    game.act(5, "mayor.elect", [5])
    assert game.view(0)["votes"] == {"5": 5}


def test_the_discussion_lasts_three_minutes_by_default():
    game = day_one()
    game.elect(None)
    assert game.state.deadline - game.now == 180_000


def test_the_discussion_ends_early_when_a_majority_of_the_living_ask_to_vote():
    game = day_one()
    game.elect(None)
    for seat in (0, 1, 2, 3):
        events = game.act(seat, "vote.request", [])
        assert game.phase == "day.discussion"
    assert events[-1] == {"kind": "vote_requested", "to": None, "seat": 3, "count": 4,
                          "needed": 5}
    assert game.view(3)["requests"] == {"count": 4, "needed": 5, "mine": True}
    assert game.view(4)["requests"]["mine"] is False
    game.act(4, "vote.request", [])
    assert game.phase == "day.vote"


def test_a_player_asks_to_vote_once():
    game = day_one()
    game.elect(None)
    game.act(0, "vote.request", [])
    with pytest.raises(NotYourTurn):
        game.act(0, "vote.request", [])


def test_the_vote_is_public_with_a_running_tally_and_the_mayor_counts_twice():
    game = day_one()
    to_vote(game, 5)
    game.act(1, "vote", [0])
    events = game.act(5, "vote", [7])
    assert events == [{"kind": "voted", "to": None, "phase": "day.vote", "seat": 5,
                       "target": 7, "tally": {"0": 1, "7": 2}}]
    assert game.view(3)["votes"] == {"1": 0, "5": 7}
    assert game.view(3)["tally"] == {"0": 1, "7": 2}
    assert game.view(3)["waiting"] == {"action": "vote", "seats": [0, 2, 3, 4, 6, 7]}
    game.timeout()
    assert game.deaths() == [(7, "vote")]


def test_a_vote_may_be_changed_or_withdrawn_until_the_phase_ends():
    game = day_one()
    to_vote(game, None)
    game.act(1, "vote", [0])
    game.act(1, "vote", [6])
    game.act(2, "vote", [0])
    game.act(2, "vote", [])
    game.timeout()
    assert game.deaths() == [(6, "vote")]


def test_nobody_may_vote_against_himself():
    game = day_one()
    to_vote(game, None)
    with pytest.raises(IllegalTarget):
        game.act(1, "vote", [1])


def test_the_vote_ends_once_every_living_player_has_voted():
    game = day_one()
    to_vote(game, None)
    for seat in game.living():
        game.act(seat, "vote", [0 if seat != 0 else 1])
    assert game.deaths() == [(0, "vote")] and game.phase == "night.seer"


def test_the_eliminated_card_is_revealed_to_everybody():
    game = day_one()
    to_vote(game, None)
    game.act(1, "vote", [6])
    game.timeout()
    assert game.events("death")[-1] == {"kind": "death", "to": None, "seat": 6,
                                        "role": "werewolf", "cause": "vote"}
    assert game.view(7)["seats"][6]["role"] == "werewolf"


def test_on_a_tie_the_mayor_chooses_among_the_tied():
    game = day_one()
    to_vote(game, 5)
    game.act(1, "vote", [0])
    game.act(2, "vote", [6])
    game.timeout()
    assert game.events("vote_result")[-1]["tie"] == [0, 6]
    assert game.phase == "day.tiebreak"
    assert game.prompts(5)[0]["choices"] == [0, 6]
    with pytest.raises(IllegalTarget):
        game.act(5, "mayor.tiebreak", [1])
    game.act(5, "mayor.tiebreak", [6])
    assert game.deaths() == [(6, "vote")]


def test_a_mayor_who_does_not_break_the_tie_in_time_eliminates_nobody():
    game = day_one()
    to_vote(game, 5)
    game.act(1, "vote", [0])
    game.act(2, "vote", [6])
    game.timeout()
    game.timeout()
    assert game.deaths() == [] and game.phase == "night.seer"


def test_a_tie_without_a_mayor_eliminates_nobody():
    game = day_one()
    to_vote(game, None)
    game.act(1, "vote", [0])
    game.act(2, "vote", [6])
    game.timeout()
    assert game.deaths() == [] and game.phase == "night.seer"


def test_a_vote_nobody_votes_in_eliminates_nobody():
    game = day_one()
    to_vote(game, 5)
    game.timeout()
    assert game.deaths() == [] and game.phase == "night.seer"
    assert game.events("vote_result")[-1]["target"] is None


def test_the_dead_do_not_vote():
    game = Game(DEAL)
    game.night(victim=7)
    with pytest.raises(NotYourTurn):
        game.act(7, "mayor.elect", [1])
    to_vote(game, None)
    with pytest.raises(NotYourTurn):
        game.act(7, "vote", [1])
    assert 7 not in game.prompts(1)[0]["choices"]


def test_a_tied_mayor_may_choose_himself_and_then_names_his_successor():
    game = day_one()
    to_vote(game, 5)
    game.act(1, "vote", [0])
    game.act(2, "vote", [5])
    game.timeout()
    game.act(5, "mayor.tiebreak", [5])
    assert game.deaths() == [(5, "vote")] and game.phase == "successor"
