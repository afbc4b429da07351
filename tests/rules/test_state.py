"""The game state serialises to and from JSON exactly (the actor stores it in Redis)."""

import json

from rules import GameState
from tests.rules.driver import EIGHT_SEATS, Game

DEAL = EIGHT_SEATS


def assert_round_trips(state: GameState) -> None:
    text = json.dumps(state.to_json())
    back = GameState.from_json(json.loads(text))
    assert back == state
    assert json.dumps(back.to_json()) == text


def test_the_state_round_trips_through_json_in_every_kind_of_phase():
    game = Game(DEAL)
    assert_round_trips(game.state)
    game.act(4, "cupid.link", [3, 5])
    game.act(1, "seer.inspect", [0])
    game.act(0, "wolves.point", [3])
    assert_round_trips(game.state)
    game.act(6, "wolves.point", [3])
    game.act(2, "witch.poison", [7])
    game.act(2, "witch.save", [])
    game.timeout()
    assert game.phase == "hunter"
    assert_round_trips(game.state)
    game.act(3, "hunter.shoot", [1])
    game.act(0, "mayor.elect", [2])
    game.say(0, "good morning")
    assert_round_trips(game.state)


def test_a_game_restored_from_json_plays_on_exactly_like_the_original():
    game = Game(DEAL)
    game.night(victim=None)
    game.act(0, "mayor.elect", [1])
    game.act(1, "mayor.elect", [2])
    restored = Game(DEAL)
    restored.state, restored.log = game.round_trip(), []
    game.log = []
    for g in (game, restored):
        g.timeout()  # the election tie is drawn by lot from the stored generator state
    assert restored.log == game.log and restored.state == game.state
