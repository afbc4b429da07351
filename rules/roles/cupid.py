"""Cupid: on the first night links two players (himself allowed); lovers die of grief together.
Lovers of two sides (one a wolf, the other not) leave them and win as the last two alive."""

from rules.events import EventKind
from rules.role import (KILL_ACTIONS, Fact, Role, Setting, Step, Win, card_team, holder, living,
                        option)


class CupidStep(Step):
    phase = "night.cupid"
    duration = "cupid"
    actions = ("cupid.link",)
    waiting_action = "cupid.link"
    night_order = 10
    names_waiting_seats = False

    holder_role = "cupid"

    def scheduled(self, t) -> bool:
        return t.s.day == 1

    def runs(self, t) -> bool:
        cupid = holder(t.s, "cupid")
        return self.scheduled(t) and cupid is not None and t.s.alive[cupid]

    def open(self, t) -> None:
        cupid = holder(t.s, "cupid")
        # "himself too if he wishes" (000, 001, 003); `forbidden`: a table's own rule
        choices = [s for s in living(t.s) if s != cupid or option(t.s, "cupid_self") == "allowed"]
        t.open_prompt(cupid, "cupid.link", choices, 2, 2)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        lovers = sorted(targets)
        t.s.memo["cupid"] = {"lovers": lovers}
        t.close_prompt(seat, action)
        # Each lover learns the other's seat (and name), the role only with lovers_learn_role;
        # Cupid knows his work.
        payload: dict = {"lovers": lovers}
        if option(t.s, "lovers_learn_role") == "yes":
            payload["roles"] = {str(s): t.s.roles[s] for s in lovers}
        t.emit("lovers", sorted(set(lovers) | {seat}), **payload)


def lovers_of(state) -> list | None:
    return state.memo.get("cupid", {}).get("lovers")


def other_lover(state, seat: int) -> int | None:
    lovers = lovers_of(state)
    if lovers and seat in lovers:
        return lovers[1] if lovers[0] == seat else lovers[0]
    return None


def grief(t, seat: int, cause: str) -> None:
    other = other_lover(t.s, seat)
    if other is not None:
        t.kill(other, "grief")


def mixed(state) -> list:
    """The lovers when they leave their sides for a team of their own, else []: when their cards
    play for two sides (`lovers_team = mixed_only`, D10), or any pair (`every_pair`: a reading
    of 001's "they must play together as a team and leave their two other teams")."""
    lovers = lovers_of(state)
    if lovers and (card_team(state, lovers[0]) != card_team(state, lovers[1])
                   or option(state, "lovers_team") == "every_pair"):
        return lovers
    return []


def moved(state, seat: int) -> str | None:
    return "lovers" if seat in mixed(state) else None


def last_two_alive(state) -> list | None:
    couple = mixed(state)
    if couple and sorted(living(state)) == couple:
        return list(couple)
    return None


def restrict(state, seat: int, action: str, choices: list) -> list:
    """Lovers may not vote against each other (002, 003), nor kill each other (003: no step's
    `kill_actions` (the pack's pointing, the poison, the other wolves' own kills) aims at his
    lover; the rest of the pack is not bound: it does not know the link, O28). The actor knows
    his lover, so taking the lover off his own menu tells him nothing."""
    other = other_lover(state, seat)
    if other is not None and (
            (action == "vote"
             and option(state, "lovers_vote_restriction") == "not_against_each_other")
            or (action in KILL_ACTIONS and option(state, "lovers_kill_restriction") == "never")):
        return [s for s in choices if s != other]
    return choices


def view_fields(state, seat: int) -> dict:
    lovers = lovers_of(state)
    is_cupid = state.roles[seat] == "cupid"
    return {"lover": other_lover(state, seat), "linked": lovers if is_cupid and lovers else None}


ROLE = Role(
    id="cupid",
    steps=(CupidStep(),),
    on_death=grief, death_order=10,  # grief first: before the reactions of the death it follows
    # a lovers' win settles: the Hunter who dies leaving them the last two is not asked (D25)
    wins=(Win("lovers_last_alive", 10, last_two_alive),),
    allegiance=moved,
    view=view_fields,
    # told by the `lovers` event, which the client reads for both (a lover's, Cupid's)
    facts=(Fact("linked", "couple"), Fact("lover", "seat")),
    prompt_filter=restrict,
    settings=(
        Setting("cupid_self", ("allowed", "forbidden"), "allowed", "cupid", "000, 001, 003"),
        Setting("lovers_learn_role", ("no", "yes"), "no", "cupid", "002"),
        Setting("lovers_vote_restriction", ("none", "not_against_each_other"), "none", "cupid",
                "002"),
        Setting("lovers_kill_restriction", ("none", "never"), "none", "cupid", "003"),
        Setting("lovers_team", ("mixed_only", "every_pair"), "mixed_only", "cupid", "000, 001"),
    ),
    durations={"cupid": 30},
    events=(
        EventKind("lovers", ("lovers",), "the lovers and Cupid",
                  "the lovers' seats (their cards with lovers_learn_role)", optional=("roles",)),
    ),
)
