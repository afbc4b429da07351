"""What a bot picks and says: the pack's fake Seer."""
import random

from bots.mind import WOLF_CARDS, Mind
from bots.policy import fake_claim
from bots.selfplay import NAMES, START
from rules import Settings, roles_in_play, start_game, view


def pack_fakers(preset: str, players: int, seeds: range = range(20)) -> int:
    """How many deals' lowest wolf pretends to be the Seer (its view as a room sends it)."""
    settings = Settings.from_json({"preset": preset})
    fakes = 0
    for seed in seeds:
        state = start_game(list(NAMES[:players]), settings, seed, START)[0]
        wolf = min(s for s, card in enumerate(state.roles) if card in WOLF_CARDS)
        mind = Mind(wolf, random.Random(seed))
        mind.see({**view(state, wolf), "roles_in_play": roles_in_play(players, settings),
                  "settings": settings.to_json()})
        fakes += fake_claim(mind) == "seer"
    return fakes


def test_a_pack_fakes_the_seer_where_the_exiled_card_is_shown():
    assert pack_fakers("seed_000", 12) == 20


def test_a_pack_never_fakes_where_cards_stay_hidden():
    # the Traitor's fake splits the Seer's word already; a wolf as a third claimant is lynched
    assert pack_fakers("seed_004", 10) == 0
