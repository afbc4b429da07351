"""The end tells the night's secret deeds that no event told while the game ran (game_over's
`story`), each once, in order; while the game runs nothing tells them, not even an extra event."""

from tests.rules.driver import Game
from tests.rules.story_game import (BAKER, BBW, DEAL, ELDER, FATHER, GUARD, MEDIUM, PIPER, VILLAGER,
                                    WITCH, play)


def test_the_end_tells_every_secret_night_deed_once_in_its_night():
    game = play()
    over = game.events("game_over")[0]
    assert over["reason"] == "piper_charmed_all"
    assert over["story"] == [
        {"night": 1, "seat": GUARD, "what": "guard.protect", "targets": [MEDIUM]},
        {"night": 1, "seat": BBW, "what": "big_bad_wolf.devour", "targets": [ELDER]},
        {"night": 1, "seat": WITCH, "what": "witch.save", "targets": [VILLAGER]},
        {"night": 1, "seat": ELDER, "what": "elder.spared", "targets": []},
        {"night": 2, "seat": GUARD, "what": "guard.protect", "targets": [WITCH]},
        {"night": 2, "seat": BBW, "what": "big_bad_wolf.devour", "targets": [MEDIUM]},
        {"night": 2, "seat": WITCH, "what": "witch.poison", "targets": [BBW]},
        {"night": 2, "seat": FATHER, "what": "infect_father.infected", "targets": [BAKER]},
        {"night": 3, "seat": GUARD, "what": "guard.protect", "targets": [ELDER]}]
    # the deeds events already told, once each: the Medium's reading, the bread, the charm
    assert [(e["to"], e["seat"]) for e in game.events("medium_result")] == [([MEDIUM], 8)]
    assert len(game.events("bread")) == 2
    assert [e["to"] for e in game.events("charmed")] == [[WITCH, GUARD, PIPER],
                                                        [WITCH, GUARD, ELDER, VILLAGER, PIPER]]
    assert game.events("infected") == [{"kind": "infected", "to": [BAKER],
                                        "wolves": [BBW, FATHER, BAKER]}]


def test_a_secret_deed_emits_nothing_more_than_a_pass_would():
    """An extra event, even to nobody, would leave a gap in the room's sequence numbers."""
    answered, passed = Game(DEAL), Game(DEAL)
    for game in (answered, passed):
        assert game.phase == "night.guard"
    assert answered.act(GUARD, "guard.protect", [MEDIUM]) == passed.act(GUARD, "guard.protect", [])
    assert "story" not in answered.view(GUARD) and answered.state.memo["story"]
    assert "story" not in passed.state.memo


def test_a_failed_infection_is_told_as_spent():
    game = Game(DEAL)
    game.act(GUARD, "guard.protect", [BAKER])
    for wolf in (BBW, FATHER):
        game.act(wolf, "wolves.point", [BAKER])
    game.timeout()  # the Infect Father's card: the pack's step lasts its full time (D16)
    game.act(FATHER, "infect_father.infect", [BAKER])
    while game.phase.startswith("night."):  # the dawn resolves it
        game.timeout()
    assert game.state.memo["story"][-1] == {"night": 1, "seat": FATHER,
                                            "what": "infect_father.infect", "targets": [BAKER]}
    assert game.state.roles[BAKER] == "baker" and game.events("infected") == []
