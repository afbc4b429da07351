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


def test_a_charmed_seat_suspects_the_seats_not_charmed_the_more_as_the_piper_gains():
    mind, others = villager_mind()
    before = {s: mind.score(s) for s in others}
    mind.observe({"kind": "charmed", "charmed": sorted([mind.me, *others[:2]])})
    first = {s: mind.score(s) - before[s] for s in others}
    assert first[others[0]] == first[others[1]] == 0.0  # charmed: not the Piper
    assert all(first[s] > 0 for s in others[2:])
    mind.observe({"kind": "charmed", "charmed": sorted([mind.me, *others[:5]])})
    later = {s: mind.score(s) - before[s] for s in others}
    assert all(later[s] > first[s] for s in others[5:])
    mind.observe({"kind": "death", "seat": others[6], "role": "piper", "cause": "vote"})
    assert mind.score(others[5]) == before[others[5]]  # the Piper is dead: no threat left


def test_a_piper_or_a_fox_read_is_voted_out_like_a_wolf():
    state = start_game(list(NAMES[:8]), SEED_000, 7, START)[0]
    seer = state.roles.index("seer")
    mind = Mind(seer, random.Random(0))
    mind.see(view(state, seer))
    piper, fox = [s for s in range(8) if s != seer][:2]
    mind.observe({"kind": "seer_result", "seat": piper, "role": "piper"})
    mind.observe({"kind": "seer_result", "seat": fox, "role": "fox"})
    assert mind.found_wolves() == [piper, fox]


def test_the_pairs_told_at_the_deal_are_friends():
    settings = Settings.from_json({"roles": ["seer", "lover", "sisters"]})
    state = start_game(list(NAMES[:10]), settings, 3, START)[0]
    for card in ("lover", "sisters"):
        first, second = [s for s, c in enumerate(state.roles) if c == card]
        mind = Mind(first, random.Random(0))
        mind.see(view(state, first))
        assert mind.friends == {second}


def test_a_seer_who_reads_the_dealt_lovers_names_them_where_they_win_as_a_pair():
    mind, (seat, *_) = villager_mind()
    mind.role = "seer"
    mind.house = {"lover_win": "pair"}
    mind.observe({"kind": "seer_result", "seat": seat, "role": "lover"})
    assert mind.readings[seat] and seat in mind.found_wolves()
    mind.house = {"lover_win": "village"}  # villagers who die together: not an enemy
    mind.observe({"kind": "seer_result", "seat": seat, "role": "lover"})
    assert not mind.readings[seat]


def test_a_villager_read_where_none_is_dealt_is_the_trickster_or_the_traitor():
    mind, (seat, *_) = villager_mind()
    mind.role = "seer"
    mind.in_play = {"seer", "trickster_wolf", "traitor", "thief"}
    mind.observe({"kind": "seer_result", "seat": seat, "role": "villager"})
    assert mind.readings[seat]
    mind.in_play.add("villager")
    mind.observe({"kind": "seer_result", "seat": seat, "role": "villager"})
    assert not mind.readings[seat]


def test_with_one_wolf_left_the_village_votes_a_possible_lover_before_him():
    from bots.policy import _vote
    mind, (wolf_a, wolf_b, suspect, *rest) = villager_mind()
    mind.dealt, mind.house = {"werewolf": 2, "lover": 2, "villager": 4}, {"lover_win": "pair"}
    mind._accuse(suspect, 5.0)  # the table's wolf suspect: kept for after the lovers
    assert not mind.hunting()
    mind.observe({"kind": "death", "seat": wolf_a, "role": "werewolf", "cause": "vote"})
    assert mind.hunting()
    living = [s for s in mind.living() if s != mind.me]
    assert _vote(mind, living, {}) not in (suspect, wolf_a)
    assert _vote(mind, living, {rest[1]: 2}) == rest[1]  # the wagon on a possible lover
    mind.observe({"kind": "death", "seat": rest[1], "role": "lover", "cause": "vote"})
    living = [s for s in mind.living() if s != mind.me]
    assert not mind.hunting() and _vote(mind, living, {}) == suspect


def test_a_claim_of_a_card_whose_holder_is_known_is_a_lie():
    mind, (seer, late, *_) = villager_mind()
    claim_seer(mind, seer, late)
    mind.observe({"kind": "death", "seat": seer, "role": "seer", "cause": "wolves"})
    before = mind.score(late)
    text = render(Claim("innocent", seat=mind.me, role="seer"), "en", mind.names)
    mind.observe({"kind": "chat", "channel": "day", "seat": late, "text": text})
    assert mind.score(late) >= before + LIAR


def test_a_vote_on_one_of_two_rival_seers_is_not_asked_about():
    mind, (real, fake, voter, *_) = villager_mind()
    claim_seer(mind, real, voter)
    mind.observe({"kind": "voted", "phase": "day.vote", "seat": voter, "target": real})
    assert mind.questions == [(voter, real)]  # an uncontested Seer claimant
    claim_seer(mind, fake, real)
    mind.observe({"kind": "voted", "phase": "day.vote", "seat": voter, "target": fake})
    mind.observe({"kind": "voted", "phase": "day.vote", "seat": real, "target": fake})
    assert mind.questions == [(voter, real)]
