"""Big Bad Wolf (001 names him among the later editions' wolves; 002 says the one-victim-a-night
rule "can change in the third expansion, Characters": the genre's standard rule, RULES.md "Roles
the seeds only name"). One of the pack in every way; after the pack has chosen he devours a
second victim alone, every night while no wolf card has died."""

from rules.role import CARDS, Dawn, Role, Step, is_wolf, living, option, powered_holder


def no_wolf_card_dead(state) -> bool:
    """Counted on the cards the table sees die: an infected player's death must not stop him (that
    would tell the table the dead was infected)."""
    return all(alive or not CARDS[role].wolf for role, alive in zip(state.roles, state.alive))


class BigBadWolfStep(Step):
    phase = "night.big_bad_wolf"
    duration = "big_bad_wolf"
    actions = ("big_bad_wolf.devour",)
    kill_actions = actions
    waiting_action = "big_bad_wolf.devour"
    night_order = 34  # after the pack (and the Infect Father's choice), before the Witch
    names_waiting_seats = False
    # with hidden cards whether a wolf card died is not public: his step stands in every night
    holder_role = "big_bad_wolf"

    def scheduled(self, t) -> bool:
        return t.s.day > 1 or option(t.s, "first_night_kill") == "on"

    def runs(self, t) -> bool:
        return powered_holder(t.s, "big_bad_wolf") is not None and no_wolf_card_dead(t.s) and (
            t.s.day > 1 or option(t.s, "first_night_kill") == "on")

    def open(self, t) -> None:
        wolf = powered_holder(t.s, "big_bad_wolf")
        victim = t.s.memo["night"]["victim"]
        anyone = option(t.s, "wolves_may_target") == "anyone"
        # a second victim: never the pack's, never himself; the pack's own target rule (D1)
        choices = [s for s in living(t.s) if s not in (wolf, victim)
                   and (anyone or not is_wolf(t.s, s))]
        t.open_prompt(wolf, "big_bad_wolf.devour", choices, 0, min(1, len(choices)))

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.close_prompt(seat, action)
        if targets:
            t.remember(seat, action, targets)
            t.s.memo["night"]["second_victim"] = targets[0]

    def done(self, t) -> bool:
        return False  # always its full time: an early end would tell the table he passed


def devour(t, night: dict) -> None:
    """The second victim dies as the pack's does (cause `wolves`: the Elder's spare life and the
    Hunter's `attack` count it), unless the Guard protects him; the Witch is shown the pack's
    victim only, so her potion cannot save this one."""
    target = night.get("second_victim")
    if target is not None and target not in night["protected"]:
        night["deaths"].append([target, "wolves"])


ROLE = Role(
    id="big_bad_wolf", team="wolves", wolf=True,
    steps=(BigBadWolfStep(),),
    dawn=(Dawn(22, devour),),
    durations={"big_bad_wolf": 30},
)
