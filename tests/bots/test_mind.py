"""What a seat infers from its frames: claimants a card or a night death proves liars."""
import random

from bots import Claim, render
from bots.mind import LIAR, Mind
from bots.selfplay import NAMES, START
from rules import Settings, start_game, view

SEED_000 = Settings.from_json({"preset": "seed_000"})


def villager_mind(players: int = 8) -> tuple[Mind, list[int]]:
    """A Villager's mind at the deal, and the other seats that hold no special card."""
    state = start_game(list(NAMES[:players]), SEED_000, 7, START)[0]
    plain = [s for s, card in enumerate(state.roles) if card == "villager"]
    mind = Mind(plain[0], random.Random(0))
    mind.see(view(state, plain[0]))
    others = [s for s in range(players) if s != plain[0]]
    return mind, others


def claim_seer(mind: Mind, speaker: int, named: int) -> None:
    text = render(Claim("wolf", seat=named, role="seer"), "en", mind.names)
    mind.observe({"kind": "chat", "channel": "day", "seat": speaker, "text": text})


def test_a_seer_card_shown_proves_the_other_seer_claimant_a_liar():
    mind, (real, fake, named, *_) = villager_mind()
    claim_seer(mind, real, fake)
    claim_seer(mind, fake, real)
    before = mind.score(fake)
    mind.observe({"kind": "death", "seat": real, "role": "seer", "cause": "vote"})
    assert mind.score(fake) >= before + LIAR


def test_a_seer_claimant_killed_by_night_makes_her_rival_suspect():
    mind, (real, fake, named, *_) = villager_mind()
    claim_seer(mind, real, named)
    claim_seer(mind, fake, named)
    before = mind.score(fake)
    mind.observe({"kind": "death", "seat": real, "role": None, "cause": "night"})
    assert mind.score(fake) >= before + 5.0
    assert mind.trust(fake) == 0.0  # his readings no longer count
