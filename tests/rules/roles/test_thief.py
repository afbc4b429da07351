"""The Thief: first of all on the first night. 001 (`thief_mode = steal`): he takes the card of
any player he chooses; the robbed plays on as a plain Villager, even if he was a wolf. 002 and 003
(`extra_cards`): two cards more than the players are dealt, he looks at the two left over and may
take one; when they are wolves he must take a wolf."""

from tests.rules.driver import Game

# seats: 0 wolf, 1 thief, 2 seer, 3 cupid, 4 villager, 5 villager, 6 villager
DEAL = ["werewolf", "thief", "seer", "cupid", "villager", "villager", "villager"]
STEAL = {"thief_mode": "steal"}


def test_the_thief_wakes_first_of_all_on_the_first_night_only():
    game = Game(DEAL, rules=STEAL)
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
    game = Game(DEAL, rules=STEAL)
    game.act(1, "thief.steal", [2])
    assert game.state.roles[1] == "seer" and game.state.roles[2] == "villager"
    assert game.events("role")[-2:] == [{"kind": "role", "to": [1], "role": "seer"},
                                        {"kind": "role", "to": [2], "role": "villager"}]
    assert game.view(1)["me"]["role"] == "seer" and game.view(2)["me"]["role"] == "villager"


def test_a_thief_who_steals_cupid_links_that_same_night():
    game = Game(DEAL, rules=STEAL)
    game.act(1, "thief.steal", [3])
    assert game.phase == "night.cupid" and game.prompts(1)[0]["action"] == "cupid.link"


def test_a_thief_who_steals_a_wolf_joins_the_pack_and_the_robbed_leaves_it():
    game = Game(DEAL, rules=STEAL)
    game.act(1, "thief.steal", [0])
    assert game.events("wolves")[-1] == {"kind": "wolves", "to": [1], "wolves": [1]}
    assert game.view(0)["wolves"] is None and game.view(1)["wolves"] == [1]
    game.timeout()  # cupid
    game.timeout()  # seer
    assert [p["action"] for p in game.prompts(1)] == ["wolves.point"] and game.prompts(0) == []


def test_a_thief_who_steals_nothing_is_a_plain_villager():
    game = Game(DEAL, rules=STEAL)
    game.timeout()
    assert game.state.roles[1] == "thief" and game.events("role")[-1]["to"] == [6]


# extra_cards: the seven seats' cards, then the two set aside
EXTRA = {("villager", "villager"): "two_villagers",
         ("villager", "werewolf"): "villager_and_werewolf",
         ("werewolf", "werewolf"): "two_werewolves"}


def extra(aside: list, **rules) -> Game:
    return Game(DEAL, aside=aside, rules={"thief_mode": "extra_cards",
                                          "thief_extra_cards": EXTRA[tuple(sorted(aside))],
                                          **rules})


def test_extra_cards_he_sees_the_two_cards_left_over_and_may_take_one():
    game = extra(["villager", "werewolf"])
    assert game.phase == "night.thief"
    assert game.events("thief_cards") == [{"kind": "thief_cards", "to": [1],
                                           "cards": ["villager", "werewolf"]}]
    assert [(p["action"], p["choices"], p["max"]) for p in game.prompts(1)] == [
        ("thief.take_first", [], 0), ("thief.take_second", [], 0), ("thief.keep", [], 0)]
    assert game.view(1)["thief_cards"] == ["villager", "werewolf"]
    assert game.view(0)["thief_cards"] is None
    game.act(1, "thief.take_second", [])
    assert game.state.roles[1] == "werewolf" and game.prompts(1) == []
    assert game.state.memo["thief"]["aside"] == ["villager", "thief"]  # his card goes aside (003)
    assert game.events("wolves")[-1] == {"kind": "wolves", "to": [0, 1], "wolves": [0, 1]}
    assert game.phase == "night.cupid"


def test_extra_cards_a_thief_who_takes_nothing_is_a_plain_villager():
    game = extra(["villager", "werewolf"])  # one wolf of two: 003 does not force him
    game.timeout()
    assert game.state.roles[1] == "thief" and game.phase == "night.cupid"


def test_extra_cards_he_may_say_he_takes_nothing_and_keeps_his_card():
    game = extra(["villager", "werewolf"])
    game.act(1, "thief.keep", [])
    assert game.state.roles[1] == "thief" and game.prompts(1) == []
    assert game.state.memo["thief"]["aside"] == ["villager", "werewolf"]
    assert game.phase == "night.cupid"
    assert not [e for e in game.log if e["kind"] == "role" and e["to"] == [1]][1:]


def test_thief_forced_wolf_if_both_wolves_he_must_take_one_and_a_timeout_takes_one_by_lot():
    game = extra(["werewolf", "werewolf"])  # forced: no prompt to take nothing
    assert [p["action"] for p in game.prompts(1)] == ["thief.take_first", "thief.take_second"]
    game.timeout()
    assert game.state.roles[1] == "werewolf" and "thief" in game.state.memo["thief"]["aside"]


def test_thief_forced_wolf_if_any_wolf_with_one_wolf_he_may_take_only_the_wolf():
    game = extra(["villager", "werewolf"], thief_forced_wolf="if_any_wolf")
    assert [p["action"] for p in game.prompts(1)] == ["thief.take_second"]
    game.timeout()
    assert game.state.roles[1] == "werewolf"


def test_thief_extra_cards_the_host_s_cards_join_the_deck_and_two_plain_cards_lie_aside():
    from rules import Settings, start_game

    for extra_cards, added in (("two_villagers", ["villager", "villager"]),
                               ("villager_and_werewolf", ["villager", "werewolf"]),
                               ("two_werewolves", ["werewolf", "werewolf"])):
        settings = Settings.from_json({"roles": ["seer", "thief"], "rules": {
            "thief_mode": "extra_cards", "thief_extra_cards": extra_cards}})
        for seed in range(20):
            state, events = start_game([f"p{i}" for i in range(8)], settings, seed, 0)
            aside = state.memo["thief"]["aside"]
            deck = sorted(state.roles + aside)
            assert deck == sorted(["werewolf", "werewolf", "seer", "thief", "villager",
                                   "villager", "villager", "villager"] + added)
            assert "thief" in state.roles and set(aside) <= {"villager", "werewolf"}
            assert {"werewolf"} & set(state.roles)  # a wolf is always dealt (O8)
            # the public deal is the seats' (the extra cards are the rule every seat sees)
            assert sum(events[0]["roles_in_play"].values()) == 8
