"""Nekomata (004): village. Killed by the wolves' attack, he takes a wolf with him, per
`nekomata_attacked`: the attacking werewolf (O4), a random living werewolf, or nobody. Only an
attack that kills him (not protected, not saved) retaliates; poison, shots, the vote and grief
kill him alone (1.12, O46)."""

from rules.role import Role, Setting, has_power, living_wolves, option
from rules.roles.werewolf import attacker


def retaliate(t, seat: int, cause: str) -> None:
    if t.s.roles[seat] != "nekomata" or cause != "wolves" or not has_power(t.s, seat):
        return
    rule = option(t.s, "nekomata_attacked")
    wolves = living_wolves(t.s)
    if rule == "nekomata_only" or not wolves:
        return
    wolf = attacker(t, seat) if rule == "attacker" else t.rng().choice(wolves)
    t.kill(wolf, "nekomata")


ROLE = Role(
    id="nekomata", on_death=retaliate, death_order=15,
    settings=(Setting("nekomata_attacked", ("attacker", "random_wolf", "nekomata_only"),
                      "attacker", "nekomata", "004"),),
)
