"""One scripted game in which every secret night deed happens once: the Guard's protection, the
Big Bad Wolf's own victim, an Elder surviving the attack on his spare life, the Witch's save and
poison, an infection, the Medium's reading, the Baker's bread, the Piper's charm. The rules tests
check its end (`test_story.py`); the browser tests show its review
(tests/client/test_end_story.py)."""

from tests.rules.driver import Game

BBW, FATHER, WITCH, GUARD, ELDER, MEDIUM, BAKER, VILLAGER, VOTED, PIPER = range(10)
DEAL = ["big_bad_wolf", "infect_father", "witch", "guard", "elder", "medium", "baker", "villager",
        "villager", "piper"]
STEP_ORDER = ["night.medium", "night.guard", "night.wolves", "night.infect_father",
              "night.big_bad_wolf", "night.witch", "night.piper"]


def step(game: Game, phase: str, seat: int, action: str, targets: list) -> None:
    # the steps before it run out (with hidden cards the Medium's lasts its full time, O1)
    while game.phase != phase and game.phase.startswith("night.") and STEP_ORDER.index(
            game.phase) < STEP_ORDER.index(phase):
        game.timeout()
    assert game.phase == phase, (game.phase, phase)
    game.act(seat, action, targets)
    if game.phase == phase:  # a step that always runs its full time (the Witch's, D9)
        game.timeout()


def play(rules: dict | None = None) -> Game:
    """`rules`: the house rules on top (seed 004's hidden cards)."""
    game = Game(DEAL, rules=rules)
    # Night 1: the pack wants the villager, the Big Bad Wolf the Elder (his spare life goes), the
    # Witch saves the villager.
    step(game, "night.guard", GUARD, "guard.protect", [MEDIUM])
    game.act(BBW, "wolves.point", [VILLAGER])
    step(game, "night.wolves", FATHER, "wolves.point", [VILLAGER])
    assert game.phase == "night.infect_father"
    game.timeout()  # the Infect Father lets the pack's kill be
    step(game, "night.big_bad_wolf", BBW, "big_bad_wolf.devour", [ELDER])
    assert game.phase == "night.witch"
    game.act(WITCH, "witch.save", [VILLAGER])
    game.timeout()
    step(game, "night.piper", PIPER, "piper.charm", [WITCH, GUARD])
    game.elect(None)
    game.vote_out(VOTED)
    # Night 2: the Medium reads the expelled, the pack's victim (the Baker) is infected, the Big Bad
    # Wolf eats the Medium, the Witch poisons him.
    step(game, "night.guard", GUARD, "guard.protect", [WITCH])
    game.act(BBW, "wolves.point", [BAKER])
    step(game, "night.wolves", FATHER, "wolves.point", [BAKER])
    step(game, "night.infect_father", FATHER, "infect_father.infect", [BAKER])
    step(game, "night.big_bad_wolf", BBW, "big_bad_wolf.devour", [MEDIUM])
    step(game, "night.witch", WITCH, "witch.poison", [BBW])
    step(game, "night.piper", PIPER, "piper.charm", [ELDER, VILLAGER])
    # The village votes out the infected Baker, then the Infect Father.
    game.vote_out(BAKER)
    step(game, "night.guard", GUARD, "guard.protect", [ELDER])
    step(game, "night.wolves", FATHER, "wolves.point", [VILLAGER])
    while game.phase.startswith("night."):
        game.timeout()
    game.vote_out(FATHER)
    return game
