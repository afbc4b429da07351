"""Seer: each night looks at one living player's card (as that card shows itself to her). The
Talkative Seer (001, `seer_kind = talkative`) has the same power, and the table hears the role
she saw, not whose it is."""

from rules.events import EVERYONE, EventKind
from rules.role import (CARDS, Dawn, Fact, Role, Setting, Step, is_wolf, living, option,
                        powered_holder)


def appearance(state, seat: int) -> str:
    """What a reading shows of a card (the Seer's, the Medium's): the card as it shows itself
    (the Trickster, the Traitor: a villager), or with 004's `wolf_or_not` only whether it is a
    werewolf."""
    card = CARDS[state.roles[seat]]
    role = card.seen_as or card.id
    if option(state, "seer_result") == "wolf_or_not":  # 004: only "werewolf" or "not one"
        role = "werewolf" if CARDS[role].wolf else "not_werewolf"  # not which wolf card
    return role


class SeerStep(Step):
    phase = "night.seer"
    duration = "seer"
    actions = ("seer.inspect",)
    waiting_action = "seer.inspect"
    night_order = 20
    names_waiting_seats = False

    holder_role = "seer"

    def scheduled(self, t) -> bool:
        return not (t.s.day == 1 and option(t.s, "seer_first_night") == "none")

    def runs(self, t) -> bool:
        return powered_holder(t.s, "seer") is not None and self.scheduled(t)

    def open(self, t) -> None:
        seer = powered_holder(t.s, "seer")
        assert seer is not None  # runs() checked it
        others = [s for s in living(t.s) if s != seer]
        if t.s.day == 1 and option(t.s, "seer_first_night") == "random_not_wolf":
            # 004: one random player who is not a werewolf is shown to her (never the
            # Trickster: the pool is the true cards, O17); no prompt, the step ends at once
            pool = [s for s in others if not is_wolf(t.s, s)]
            if pool:  # a table of wolves and her shows her nothing
                self.see(t, seer, t.rng().choice(pool))
            return
        t.open_prompt(seer, "seer.inspect", others, 1, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.close_prompt(seat, action)
        self.see(t, seat, targets[0])

    def see(self, t, seat: int, target: int) -> None:
        role = appearance(t.s, target)
        t.s.memo.setdefault("seer", {"results": []})["results"].append(
            {"seat": target, "role": role, "night": t.s.day})
        t.emit("seer_result", [seat], seat=target, role=role)

    def close(self, t) -> None:
        # The Talkative Seer's public line comes every night she wakes, "nothing seen" (null)
        # after a timeout (O15), so its absence never tells anything; at once or at dawn.
        if option(t.s, "seer_kind") == "talkative":
            results = t.s.memo.get("seer", {}).get("results", [])
            role = results[-1]["role"] if results and results[-1]["night"] == t.s.day else None
            if option(t.s, "talkative_announce") == "at_once":
                t.emit("talkative_seer", None, role=role)
            else:
                t.s.memo["night"]["talk"] = role
        super().close(t)


def announce_at_dawn(t, night: dict) -> None:
    if "talk" in night:
        t.emit("talkative_seer", None, role=night["talk"])


def view_fields(state, seat: int) -> dict:
    if state.roles[seat] != "seer":
        return {"seer_results": None}
    return {"seer_results": list(state.memo.get("seer", {}).get("results", []))}


ROLE = Role(id="seer", steps=(SeerStep(),), view=view_fields, durations={"seer": 30},
            facts=(Fact("seer_results", "results", told_by="seer_result"),),
            dawn=(Dawn(5, announce_at_dawn),),
            settings=(Setting("seer_kind", ("seer", "talkative"), "seer", "seer", "001"),
                      Setting("talkative_announce", ("at_once", "at_dawn"), "at_once", "seer",
                              "001"),
                      Setting("seer_result", ("role", "wolf_or_not"), "role", "seer", "004"),
                      Setting("seer_first_night", ("normal", "random_not_wolf", "none"),
                              "normal", "seer", "004")),
            events=(
                EventKind("seer_result", ("seat", "role"), "the Seer",
                          "what her reading shows of a card"),
                EventKind("talkative_seer", ("role",), EVERYONE,
                          "the talkative Seer's reading, told to the table "
                          "(not whose card it was)"),
            ))
