"""White Werewolf (named by 001; the genre's standard rule): he hunts with the pack, every second
night he may also devour another wolf, and he wins alone as the last player alive."""

from rules import outcome
from tests.rules.driver import Game

# seats: 0 wolf, 1 white werewolf, 2 guard, 3 witch, 4-7 villagers
DEAL = ["werewolf", "white_werewolf", "guard", "witch", "villager", "villager", "villager",
        "villager"]


def first_night(game: Game, victim: int | None = None) -> None:
    game.timeout()  # guard
    if victim is None:
        game.timeout()
    else:
        game.act(0, "wolves.point", [victim])
        game.act(1, "wolves.point", [victim])
    game.timeout()  # witch


def test_the_white_werewolf_hunts_with_the_pack_and_knows_it():
    game = Game(DEAL)
    game.timeout()  # guard
    assert game.phase == "night.wolves" and game.view(1)["wolves"] == [0, 1]
    assert game.view(0)["wolves"] == [0, 1]
    assert game.prompts(1)[0]["action"] == "wolves.point"


def test_every_second_night_after_the_pack_he_may_devour_another_wolf():
    game = Game(DEAL)
    first_night(game, victim=4)
    assert [p for p in game.log if p.get("phase") == "night.white_werewolf"] == []  # night 1
    game.elect(None)
    game.vote_out(None)
    game.timeout()  # guard
    game.act(0, "wolves.point", [5])
    game.act(1, "wolves.point", [5])
    assert game.phase == "night.white_werewolf"
    prompt = game.prompts(1)[0]
    assert prompt["action"] == "white_werewolf.devour" and prompt["choices"] == [0]
    assert game.prompts(0) == []
    game.act(1, "white_werewolf.devour", [0])
    assert game.phase == "night.white_werewolf"  # his step lasts its full time
    game.timeout()
    assert game.phase == "night.witch"
    assert game.view(3)["witch"]["victim"] == 5  # the Witch learns the pack's victim only
    game.timeout()
    assert game.deaths()[-2:] == [(5, "wolves"), (0, "white_werewolf")]


def test_the_guard_s_protection_holds_against_the_white_werewolf():
    game = Game(DEAL)
    first_night(game)
    game.elect(None)
    game.vote_out(None)
    game.act(2, "guard.protect", [0])
    game.timeout()  # the pack points at nobody
    game.act(1, "white_werewolf.devour", [0])
    game.timeout()
    game.timeout()  # witch
    assert game.deaths() == []


def test_he_wins_alone_as_the_last_player_alive_and_the_pack_does_not_win_while_he_lives():
    # seats: 0 wolf, 1 white werewolf, 2-5 villagers
    game = Game(["werewolf", "white_werewolf", "villager", "villager", "villager", "villager"])
    for victim, out in ((2, 3), (4, 5)):
        game.act(0, "wolves.point", [victim])
        game.act(1, "wolves.point", [victim])
        if game.phase == "night.white_werewolf":
            game.timeout()
        if game.state.day == 1:
            game.elect(None)
        game.vote_out(out)
    # only the two wolves are alive: the pack has not won, the White Werewolf lives
    assert game.living() == [0, 1] and outcome(game.state) is None
    assert game.phase == "night.wolves" and game.prompts(0)[0]["choices"] == []
    game.timeout()  # night 3: no devouring on odd nights
    game.vote_out(None)
    game.timeout()  # night 4's pack
    assert game.phase == "night.white_werewolf"
    game.act(1, "white_werewolf.devour", [0])
    game.timeout()
    assert outcome(game.state).winners == [1]
    assert outcome(game.state).reason == "white_werewolf_alone"


def test_with_the_white_werewolf_dead_the_pack_wins_as_usual():
    game = Game(["werewolf", "white_werewolf", "villager", "villager", "villager", "villager"])
    game.act(0, "wolves.point", [2])
    game.act(1, "wolves.point", [2])
    game.elect(None)
    game.vote_out(1)
    assert outcome(game.state) is None
    game.act(0, "wolves.point", [3])
    game.vote_out(4)
    game.act(0, "wolves.point", [5])
    assert outcome(game.state).reason == "only_wolves_alive"
    assert outcome(game.state).winners == [0]  # he plays for himself: not among the pack's winners
