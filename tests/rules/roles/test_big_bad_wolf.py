"""Big Bad Wolf (named by 001 and 002; the genre's standard rule): one of the pack; after it has
chosen he devours a second victim alone, every night while no wolf card has died."""

from tests.rules.driver import Game

# seats: 0 wolf, 1 big bad wolf, 2 guard, 3 witch, 4 elder, 5-9 villagers
DEAL = ["werewolf", "big_bad_wolf", "guard", "witch", "elder", "villager", "villager",
        "villager", "villager", "villager"]


def pack(game: Game, victim: int) -> None:
    game.act(0, "wolves.point", [victim])
    game.act(1, "wolves.point", [victim])


def test_after_the_pack_he_devours_a_second_victim_who_dies_at_dawn():
    game = Game(DEAL)
    game.timeout()  # guard
    pack(game, 5)
    assert game.phase == "night.big_bad_wolf"
    prompt = game.prompts(1)[0]
    assert prompt["action"] == "big_bad_wolf.devour" and (prompt["min"], prompt["max"]) == (0, 1)
    assert prompt["choices"] == [2, 3, 4, 6, 7, 8, 9]  # not the pack's victim, not a wolf
    game.act(1, "big_bad_wolf.devour", [6])
    assert game.phase == "night.big_bad_wolf"  # his step lasts its full time
    game.timeout()
    assert game.view(3)["witch"]["victim"] == 5  # the Witch is shown the pack's victim only
    game.act(3, "witch.save", [5])
    game.timeout()
    assert game.deaths() == [(6, "wolves")]


def test_the_guard_protects_against_him_and_the_elder_spends_his_spare_life_on_him():
    game = Game(DEAL)
    game.act(2, "guard.protect", [6])
    pack(game, 5)
    game.act(1, "big_bad_wolf.devour", [6])
    game.timeout()
    game.timeout()  # witch
    assert game.deaths() == [(5, "wolves")]
    game.elect(None)
    game.vote_out(None)
    game.timeout()  # guard
    pack(game, 7)
    game.act(1, "big_bad_wolf.devour", [4])
    game.timeout()
    game.timeout()
    assert game.deaths()[-1] == (7, "wolves") and game.state.alive[4]  # the Elder's spare life


def test_once_a_wolf_card_has_died_he_no_longer_wakes():
    game = Game(DEAL)
    game.timeout()
    pack(game, 5)
    game.timeout()  # no second victim
    game.timeout()
    game.elect(None)
    game.vote_out(0)
    game.timeout()  # guard
    game.act(1, "wolves.point", [6])
    assert game.phase == "night.witch"


def test_lovers_kill_restriction_never_he_does_not_devour_his_lover():
    game = Game(["werewolf", "big_bad_wolf", "cupid", "villager", "villager", "villager",
                 "villager"], rules={"lovers_kill_restriction": "never"})
    game.act(2, "cupid.link", [1, 3])
    game.act(0, "wolves.point", [4])
    game.act(1, "wolves.point", [4])
    assert game.phase == "night.big_bad_wolf"
    assert game.prompts(1)[0]["choices"] == [2, 5, 6]
