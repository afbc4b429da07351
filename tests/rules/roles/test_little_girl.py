"""The Little Girl (001, 002, 003): peeks while the wolves choose; the wolves may catch her, and a
caught Little Girl they kill cannot be saved; the Guard never protects her."""

from tests.rules.driver import Game

# seats: 0 wolf, 1 little girl, 2 witch, 3 guard, 4 wolf, 5 villager, 6 villager, 7 villager
DEAL = ["werewolf", "little_girl", "witch", "guard", "werewolf", "villager", "villager",
        "villager"]


def to_wolves(game: Game) -> None:
    game.timeout()  # guard
    assert game.phase == "night.wolves"


def test_she_peeks_during_the_wolves_step_and_sees_their_pointing_under_letters():
    game = Game(DEAL, rules={"little_girl_caught_chance": 0})
    to_wolves(game)
    assert [p["action"] for p in game.prompts(1)] == ["little_girl.peek"]
    game.act(0, "wolves.point", [6])
    game.act(1, "little_girl.peek", [])
    first = game.events("peeked")[-1]
    assert first["to"] == [1] and list(first["pointing"].values()) == [6]
    assert set(first["pointing"]) <= {"A", "B"}  # letters, never seats
    game.act(4, "wolves.point", [7])
    assert list(game.events("peeked")[-1]["pointing"].values()) == [7]
    assert set(game.view(1)["little_girl"]["pointing"].values()) == {6, 7}
    assert game.view(0)["little_girl"] is None


def test_peeking_does_not_keep_the_wolves_step_open_and_nothing_public_shows_it():
    game = Game(DEAL, rules={"little_girl_caught_chance": 0})
    to_wolves(game)
    game.act(0, "wolves.point", [6])
    game.act(4, "wolves.point", [6])
    assert game.phase == "night.witch"  # she never peeked: the step ended without her
    assert all(e["to"] != [1] or e["kind"] in ("prompt", "prompt_closed", "role")
               for e in game.log)


def test_a_caught_little_girl_is_known_to_the_pack_and_the_witch_may_not_save_her():
    game = Game(DEAL, rules={"little_girl_caught_chance": 50}, seed=1)
    to_wolves(game)
    game.act(1, "little_girl.peek", [])
    assert game.events("little_girl_caught") == [
        {"kind": "little_girl_caught", "to": [0, 4], "seat": 1}]
    game.act(0, "wolves.point", [1])
    game.act(4, "wolves.point", [1])
    assert [p["action"] for p in game.prompts(2)] == ["witch.poison"]  # no save offered
    game.timeout()
    assert game.deaths() == [(1, "wolves")]


def test_chosen_without_being_caught_she_may_be_saved():
    game = Game(DEAL, rules={"little_girl_caught_chance": 0})
    to_wolves(game)
    game.act(0, "wolves.point", [1])
    game.act(4, "wolves.point", [1])
    assert "witch.save" in [p["action"] for p in game.prompts(2)]


def test_the_guard_s_protection_never_holds_on_her_and_he_is_not_told():
    game = Game(DEAL, rules={"little_girl_caught_chance": 0})
    game.act(3, "guard.protect", [1])
    game.act(0, "wolves.point", [1])
    game.act(4, "wolves.point", [1])
    game.timeout()  # witch
    assert game.deaths() == [(1, "wolves")]


def test_little_girl_from_night_2_she_does_not_peek_on_the_first_night():
    game = Game(DEAL, rules={"little_girl_from_night": 2})
    to_wolves(game)
    assert game.prompts(1) == []


def test_while_she_peeks_she_reads_the_wolves_lines_under_their_letters_and_not_before():
    game = Game(DEAL, rules={"little_girl_caught_chance": 0})
    to_wolves(game)
    game.say(0, "before she peeks")
    game.act(1, "little_girl.peek", [])
    letters = game.state.memo["little_girl"]["labels"]
    events = game.say(4, "the seer is seat 2")
    assert events[1] == {"kind": "chat", "to": [1], "channel": "wolves", "seat": None,
                         "name": letters["4"], "text": "the seer is seat 2",
                         "ts": game.now, "overheard": True}
    assert [line["text"] for line in game.view(1)["chat"]["wolves"]] == ["the seer is seat 2"]
    assert all(line["seat"] is None for line in game.view(1)["chat"]["wolves"])
    assert len(game.view(0)["chat"]["wolves"]) == 2  # the wolves see their own lines only
    game.act(0, "wolves.point", [6])
    game.act(4, "wolves.point", [6])
    assert game.phase == "night.witch"
    assert len(game.say(0, "after the step")) == 1  # her peek ended with the wolves' step


def test_the_end_shows_each_wolves_line_once_without_her_copies():
    game = Game(["werewolf", "little_girl", "villager", "villager", "villager", "villager"],
                rules={"little_girl_caught_chance": 0})
    game.act(1, "little_girl.peek", [])
    game.say(0, "hello")
    game.act(0, "wolves.point", [2])
    game.elect(None)
    game.vote_out(0)
    over = game.events("game_over")[0]
    assert [line["text"] for line in over["chat"]] == ["hello"]
    assert [line["text"] for line in game.view(1)["chat"]["wolves"]] == ["hello"]
