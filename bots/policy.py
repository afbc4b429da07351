"""What a bot picks, one policy per prompt's action (every card's, the Mayor's and the day's),
and what it says. A policy returns targets among the prompt's choices (the bot trims and fills
them to the prompt's bounds), or None to leave the prompt be."""
from __future__ import annotations

import random
from collections.abc import Callable

from bots.claims import Claim
from bots.mind import KNOWN, TRUSTED, WOLF_CARDS, Mind

POWER_CLAIMS = ("seer", "medium", "witch", "guard")
SPOILERS = ("lover", "fox")  # cards that take the village's win if alive at its end
SURE = 3.0  # a suspicion the bot acts on alone (a trusted reading, a proven liar)


def random_targets(prompt: dict, rng: random.Random) -> list[int]:
    """The random seat of the benchmark's baseline: any legal answer."""
    k = rng.randint(prompt["min"], min(prompt["max"], len(prompt["choices"])))
    return rng.sample(prompt["choices"], k)


def fake_claim(mind: Mind) -> str | None:
    """Whether this wolf-side seat will pretend to be the Seer: the Traitor often, a pack of
    two or more always at a table of 10 or more (never below) that shows the exiled's card,
    and only by its lowest seat, so two wolves never claim the same card (loadtest.botplay, 100
    games, always against half the time: +12 points at 000/12 and 000/18). At 000/8 half the
    time paid only while the village lynched the real Seer for coming out second: 200 games,
    the pack 24.0% half the time, 34.5% never. Where cards stay hidden (004) no wolf fakes:
    the Traitor's fake already splits the Seer's word, and a wolf as a third claimant is the
    one the village lynches (500 games, the pack 36.4% against 10.5% at 004/10, 40.4% against
    30.8% at 004/16); a lone wolf there neither, the real Seer answering him (004/6, 2,000
    games: 31.6% against 25.7% faking one game in five). Elsewhere a lone wolf seldom: a fake
    found out costs him the game, where a pack loses one of its own."""
    if mind.role == "traitor":
        return "seer" if mind.rng.random() < 0.6 else None
    if mind.role in WOLF_CARDS and mind.pack and mind.me == min(mind.pack):
        shown = mind.house.get("reveal_exile", "yes") != "no"
        odds = 0.0 if not shown else 0.2 if len(mind.pack) == 1 else \
            1.0 if len(mind.names) >= 10 else 0.0
        return "seer" if mind.rng.random() < odds else None
    return None


def _counter_target(mind: Mind) -> int | None:
    """A Seer claimant who named one of the pack: the faker names her back (AIWolf's counter
    claim), so the village has two Seers to choose from."""
    for claimant, readings in mind.said_wolf.items():
        if mind.alive[claimant] and claimant not in mind.pack and any(
                wolf and seat in mind.pack for seat, wolf in readings):
            return claimant
    return None


def _others(mind: Mind, choices: list[int]) -> list[int]:
    """The choices that are not the seat's own side (for the pack: not wolves, nor the Psycho
    whose attack killed one of them)."""
    if mind.wolf_side():
        rest = [c for c in choices if c not in mind.pack and c != mind.me
                and mind.cards.get(c) != "psycho"]
    else:
        rest = [c for c in choices if c not in mind.friends and c != mind.me]
    return rest or list(choices)


def _public(mind: Mind, seat: int) -> float:
    """How the village sees `seat`, as far as this seat can tell (the pack's estimate)."""
    return mind.suspicion.get(seat, 0.0)


def _victim(mind: Mind, choices: list[int]) -> int:
    """The pack's victim: the claimants first, then whom the village trusts (the suspected are
    worth more alive, as the village's next mistake) and, to a charmed wolf, the seats that may
    be the Piper; never a claimed Hunter. Spared: a Seer claimant who vouched for one of us (the
    Traitor, by his cover), and the rival of our living fake Seer (her death, her card shown,
    proves him a liar, and the Witch poisons him: every_card_b/14)."""
    def worth(seat: int) -> float:
        claimed = mind.claimed.get(seat)
        if any(t in mind.pack and not wolf for t, wolf in mind.said_wolf.get(seat, ())):
            return -8.0
        # (the fake too: his own claim is not in his `claimed`; proposing first, he ate his
        # rival and was proven a liar)
        if claimed in ("seer", "medium") and any(
                (mind.my_claim if w == mind.me else mind.claimed.get(w)) == claimed
                for w in mind.pack if mind.alive[w]):
            return -5.0 + mind.rng.random()
        bonus = {"seer": 6.0, "medium": 4.0, "witch": 3.0, "guard": 3.0, "hunter": -3.0}
        hunts = 2.0 * len(mind.accused.get(seat, set()) & mind.pack)  # it names us: silence it
        return bonus.get(claimed or "", 0.0) + hunts + mind.piper_threat(seat) \
            - max(-2.0, min(2.0, _public(mind, seat))) + mind.rng.random()
    return max(_others(mind, choices), key=worth)


def _vote(mind: Mind, choices: list[int], tally: dict[int, int]) -> int:
    if mind.wolf_side():
        wagons = sorted((s for s in tally if s in choices), key=lambda s: -tally[s])
        lost = [s for s in wagons[:1] if s in mind.pack and _public(mind, s) >= SURE]
        if lost and mind.me not in lost:
            # a partner the village will lynch anyway: the bus buys trust (always: seed_000/8,
            # 500 games, the pack 35.6% against 34.0% at 70% of the time)
            return lost[0]
        rest = _others(mind, choices)
        # never a seat the village trusts (a Seer claimant it believes, a seat vouched for): a
        # vote on it is asked about at once, and read once its card is shown
        # (one of two rival claimants is fair game: the village votes them too)
        rest = [s for s in rest if mind.trust(s) < TRUSTED and _public(mind, s) > -1.0] or rest
        # nor the village's leading wagon: it lynches him without us, and once his card is shown
        # every vote on him counts against its voter (500 games, the pack: seed_000/18 62.0%
        # against 42.2% joining a small wagon 60% of the time, every_card_b/14 24.2% against
        # 19.0%); a block on one seat shows the same way (every_card_b/14, 150 games: 35%
        # against 25%)
        lead = [s for s in wagons if s in rest][:1]
        if lead and len(mind.names) >= 10 and len(rest) > 1:
            rest.remove(lead[0])
        # the lot among the more suspected half, where a villager's vote would go too (500
        # games, the pack: seed_000/8 36.0% against 33.4%, every_card_b/14 39.2% against 32.4%)
        if len(rest) > 2:
            rest = sorted(rest, key=lambda s: -_public(mind, s))[:(len(rest) + 1) // 2]
        return mind.rng.choice(rest)
    if mind.hunting():
        spoiler = _spoiler(mind, choices, tally)
        if spoiler is not None:
            return spoiler
    found = [s for s in mind.found_wolves() if s in choices]
    if found:
        return found[0]
    # never an uncontested reader's claimant (the table's "I trust" lines no longer add up)
    rest = _others(mind, choices)
    rest = [s for s in rest if mind.trust(s) < TRUSTED or mind.score(s) >= SURE] or rest
    return mind.most_suspected(rest, noise=0.5)


def _spoiler(mind: Mind, choices: list[int], tally: dict[int, int]) -> int | None:
    """With one wolf left and the dealt Lovers or the Fox maybe alive, the wolf's lynch would
    hand them the village's win: a seat that may hold such a card goes first (the wagon on one
    if there is one, else the least suspected of being the wolf). Never a seat whose card I
    know, a trusted claimant, a claimed power, nor the one suspected of being the wolf."""
    def fits(seat: int) -> bool:
        if seat in mind.cards or seat == mind.me or seat in mind.friends:
            return False
        if seat in mind.readings:
            return mind.read_cards.get(seat) in SPOILERS
        return mind.claimed.get(seat) is None and mind.score(seat) < SURE
    pool = [s for s in choices if fits(s)]
    read = [s for s in pool if s in mind.readings]  # a spoiler my reading showed
    if read:
        return read[0]
    if not pool:
        return None
    return max(pool, key=lambda s: (tally.get(s, 0), -mind.score(s)))


def _leader(weights: dict[int, int]) -> int | None:
    """Whom the count eliminates: its one top seat (None: a tie, or no vote)."""
    if not weights:
        return None
    best = max(weights.values())
    top = [s for s, w in weights.items() if w == best]
    return top[0] if len(top) == 1 else None


def _want_out(mind: Mind, seat: int) -> float:
    """How much this seat wants `seat` voted out (-KNOWN: never: my pack, a friend, a villager
    I know)."""
    if mind.wolf_side():
        return -KNOWN if seat in mind.pack or seat == mind.me else _public(mind, seat)
    return mind.score(seat)


def _settle(mind: Mind, choices: list[int], preferred: int) -> int:
    """My vote such that the vote does not end tied again, when it can: after a day whose vote
    sent nobody out (two bots voting each other while a silent wolf kills nobody would play on
    for hours; breaking every tie costs the pack, loadtest.botplay: -12 points at 000/18). Else
    `preferred`. Stuck in the tie myself (every vote of mine leaves one), I name a third seat, so
    that whoever voted me can join it. The pack breaks ties only onto villagers."""
    if not mind.stalled():
        return preferred
    base = {v: t for v, t in mind.ballot.items() if v != mind.me}

    def leader(vote: int) -> int | None:
        return _leader(mind.count({**base, mind.me: vote}))

    if leader(preferred) is not None:
        return preferred
    ends = {c: out for c in choices if (out := leader(c)) is not None
            and _want_out(mind, out) > -KNOWN / 2}
    if ends:  # the end I want most, voting the one who goes if I can
        return max(ends, key=lambda c: (_want_out(mind, ends[c]), c == ends[c]))
    weights = mind.count({**base, mind.me: preferred})
    best = max(weights.values(), default=0)
    tied = {s for s, w in weights.items() if w == best}
    outside = [c for c in choices if c not in tied and _want_out(mind, c) > -KNOWN / 2]
    if mind.me in tied and outside and not mind.wolf_side():
        return max(outside, key=lambda c: _want_out(mind, c))
    return preferred


def _last_to_vote(mind: Mind) -> bool:
    return len([v for v in mind.ballot if v != mind.me]) >= len(mind.living()) - 1


POINT_TAKERS = ("psycho", "nekomata")  # cards that take a wolf whose point was on them


def _attacker(mind: Mind) -> int:
    """The wolf who makes tonight's kill, the same to every wolf (from what the table said):
    the one the village reads best, a claimant first (a fake is proven a liar once his rival's
    card is shown). The attack's victim may be the Psycho or the Nekomata, who take the wolf
    whose point was on them: better the exposed wolf than a hidden one."""
    def exposure(wolf: int) -> tuple[bool, int, int]:
        claimed = mind.my_claim if wolf == mind.me else mind.claimed.get(wolf)
        named = sum(wolf in seats for seats in mind.accused.values()) + sum(
            target == wolf for votes in mind.votes.values() for target in votes.values())
        return claimed is not None, named, -wolf
    return max((w for w in mind.pack | {mind.me} if mind.alive[w]), key=exposure)


def pack_proposal(mind: Mind, p: dict) -> int:
    """The pack's victim tonight: the first proposal made, else mine."""
    if mind.pointed is not None and mind.pointed in p["choices"]:
        return mind.pointed
    return _victim(mind, p["choices"])


def _wolves_point(mind, p):
    """Where the Psycho or the Nekomata may be dealt, only the attacker points at the pack's
    victim (the others propose it on the pack's channel), so that the card takes the wolf the
    village reads anyway (the step then ends at its deadline); elsewhere every wolf points, and
    the step ends once they agree. Near the deadline, an attacker who has not pointed (a human
    away, or of another mind) leaves the pack's point to the others: a night without a kill
    costs the pack more."""
    attacker = _attacker(mind) if mind.may_be_in_play(*POINT_TAKERS) else mind.me
    if attacker != mind.me and not (mind.late and mind.pointing.get(attacker) is None):
        return [] if mind.my_point is not None else None
    victim = pack_proposal(mind, p)
    return [victim] if mind.my_point != victim else None


def _seer_inspect(mind, p):
    """The most suspected seat not yet read, but not one who claims her card: she knows he
    lies, and the Traitor (or the Trickster) would read clean, her word then vouching for him."""
    unread = [c for c in p["choices"] if c not in mind.readings and c not in mind.cards]
    unread = [c for c in unread if mind.claimed.get(c) != mind.role] or unread
    return [mind.most_suspected(_others(mind, unread or p["choices"]), noise=1.0)]


def _witch_save(mind, p):
    victim = p["choices"][0]
    if mind.wolf_side() or mind.score(victim) >= 1.0:
        return None
    claimant = mind.claimed.get(victim) in POWER_CLAIMS
    return [victim] if claimant or victim == mind.me or mind.rng.random() < 0.7 else None


def _witch_poison(mind, p):
    if not mind.wolf_side() and mind.hunting():
        return None  # the last wolf's death would hand the spoilers the win
    if mind.wolf_side():
        trusted = [c for c in p["choices"] if mind.trust(c) > 0 and c not in mind.pack]
        return trusted[:1] or None
    target = mind.most_suspected(_others(mind, p["choices"]), noise=0.1)
    return [target] if mind.score(target) >= SURE else None


def _guard_protect(mind, p):
    if not p["choices"]:
        return []
    if mind.wolf_side():
        return [mind.rng.choice(p["choices"])]
    claimants = sorted((c for c in p["choices"] if mind.claimed.get(c) in POWER_CLAIMS
                        and mind.score(c) < SURE),
                       key=lambda c: (mind.claimed[c] != "seer", -mind.trust(c)))
    if claimants:
        return [claimants[0]]
    if mind.me in p["choices"] and mind.rng.random() < 0.3:
        return [mind.me]
    return [mind.least_suspected(p["choices"], noise=1.0)]


def _shoot(mind, p):
    """The Hunter's shot (and his night shot, when he is sure)."""
    if mind.wolf_side():
        return [max(_others(mind, p["choices"]), key=lambda s: mind.trust(s) - _public(mind, s)
                    + mind.rng.random())]
    if mind.hunting():  # not the last wolf while the spoilers may live
        if p["min"] == 0:
            return None
        spoiler = _spoiler(mind, p["choices"], {})
        if spoiler is not None:
            return [spoiler]
    target = mind.most_suspected(_others(mind, p["choices"]))
    if p["min"] == 0 and mind.score(target) < SURE:
        return None
    return [target]


def _cupid_link(mind, p):
    choices = list(p["choices"])
    first = mind.me if mind.me in choices and mind.rng.random() < 0.5 else \
        mind.rng.choice(choices)
    return [first, mind.rng.choice([c for c in choices if c != first])]


def _thief(mind, p):
    """One of the Thief's prompts: the card he would rather hold, taken by its prompt."""
    if p["action"] == "thief.steal":
        return [mind.rng.choice(p["choices"])]
    offered = {action: i for i, action in enumerate(("thief.take_first", "thief.take_second"))
               if action in mind.prompts}
    cards = mind.thief_cards
    best = None
    for action, i in offered.items():
        card = cards[i] if i < len(cards) else "villager"
        if card not in ("villager", *WOLF_CARDS):
            best = action
    if best is None and "thief.keep" not in mind.prompts and offered:
        best = next(iter(offered))  # forced to take a wolf
    best = best or "thief.keep"
    return [] if p["action"] == best else None


def _little_girl_peek(mind, p):
    return [] if mind.rng.random() < 0.4 else None


def _piper_charm(mind, p):
    return mind.rng.sample(p["choices"], min(p["max"], len(p["choices"])))


def _white_devour(mind, p):
    """Only a wolf the village already suspects (it would lynch him anyway): a pack thinned at
    random loses to the village before he can win alone (every_card_a/18, 150 games: the pack
    36% against 30%, his own wins as many)."""
    exposed = [c for c in p["choices"] if c != mind.me and _public(mind, c) >= SURE]
    return [max(exposed, key=lambda c: _public(mind, c))] if exposed else None


def _infect(mind, p):
    victim = p["choices"][0]
    return [victim] if mind.claimed.get(victim) or mind.rng.random() < 0.4 else None


def _big_bad_devour(mind, p):
    return [_victim(mind, p["choices"])] if p["choices"] else []


def _scapegoat(mind, p):
    """Who may vote tomorrow: the seats the village trusts (and, on the pack's side, wolves)."""
    keep = sorted(p["choices"], key=lambda s: -KNOWN if s in mind.pack and mind.wolf_side()
                  else mind.score(s) + mind.rng.random())
    return keep[:max(1, len(keep) // 2)]


def _mayor_stand(mind, p):
    return [] if mind.rng.random() < 0.3 else None


def _elect(mind, p):
    pack = [c for c in p["choices"] if c in mind.pack and mind.wolf_side()]
    if pack:
        return [mind.rng.choice(pack)]
    return [mind.least_suspected(p["choices"], noise=0.5)]


def _tiebreak(mind, p):
    return [_vote(mind, p["choices"], {})]


def _day_vote(mind, p):
    vote = _vote(mind, p["choices"], mind.count(mind.ballot))
    return [_settle(mind, p["choices"], vote) if _last_to_vote(mind) else vote]


def second_look(mind: Mind, prompt: dict) -> list[int] | None:
    """The day's vote again before it closes: my vote changed only to end a tie."""
    mine = mind.ballot.get(mind.me)
    if prompt["action"] != "vote" or mine is None or mine not in prompt["choices"]:
        return None
    vote = _settle(mind, prompt["choices"], mine)
    return None if vote == mine else [vote]


def _vote_request(mind, p):
    return []


POLICIES: dict[str, Callable[[Mind, dict], list[int] | None]] = {
    "wolves.point": _wolves_point,
    "seer.inspect": _seer_inspect,
    "witch.save": _witch_save,
    "witch.poison": _witch_poison,
    "guard.protect": _guard_protect,
    "hunter.shoot": _shoot,
    "hunter.night_shot": _shoot,
    "cupid.link": _cupid_link,
    "thief.steal": _thief,
    "thief.take_first": _thief,
    "thief.take_second": _thief,
    "thief.keep": _thief,
    "little_girl.peek": _little_girl_peek,
    "piper.charm": _piper_charm,
    "white_werewolf.devour": _white_devour,
    "infect_father.infect": _infect,
    "big_bad_wolf.devour": _big_bad_devour,
    "scapegoat.designate": _scapegoat,
    "mayor.stand": _mayor_stand,
    "mayor.elect": _elect,
    "mayor.successor": _elect,
    "mayor.tiebreak": _tiebreak,
    "vote.request": _vote_request,
    "vote": _day_vote,
}


def choose(mind: Mind, prompt: dict, fake: str | None) -> list[int] | None:
    policy = POLICIES.get(prompt["action"])
    if prompt["max"] > 0 and not prompt["choices"]:
        return []  # nobody to choose: pass
    if policy is None:  # an action this bot does not know yet: any legal answer
        return random_targets(prompt, mind.rng)
    return policy(mind, prompt)


def lines(mind: Mind, fake: str | None) -> list[tuple[Claim, bool]]:
    """What the seat would say now, most important first: (claim, said again each day?)."""
    said: list[tuple[Claim, bool]] = []
    role = mind.role
    living = mind.living()
    if role in ("seer", "medium") and not mind.wolf_side():
        rivals = any(r == role and s != mind.me for s, r in mind.claimed.items())
        # the Medium too with a wolf read: under hidden cards only she can tell the table it
        # voted a wolf out, which says whom its votes can trust (seed_004/16, 300 games: the
        # village 15.7% against 14.0%; 004/10 48.0% against 46.7%)
        out = mind.found_wolves() or mind.day >= 3 or rivals or role == "medium" and (any(
            mind.readings.get(s) != wolf for readings in mind.said_wolf.values()
            for s, wolf in readings if s in mind.readings) or any(mind.readings.values()))
        if out:
            for seat, wolf in sorted(mind.readings.items(), key=lambda r: not r[1]):
                said.append((Claim("wolf" if wolf else "innocent", seat=seat, role=role), False))
    # the pack's lowest seat answers a Seer who named one of them, whether it meant to fake; not
    # below 10 seats, where her card is soon shown and proves him a liar (seed_000/8, 500
    # games: the pack 34.0% against 32.6%)
    speaker = mind.role in WOLF_CARDS and len(mind.names) >= 10 \
        and mind.me == min(mind.pack & set(living) or {mind.me})
    if "seer" in mind.cards.values() and mind.my_claim != "seer":
        # the Seer's card was shown (the Psycho's backlash, the pack's night): a claim of it
        # now is a proven lie, and the village votes him out at once
        fake, speaker = None, False
    countered = _counter_target(mind) if fake or speaker else None
    if countered is not None:
        said.append((Claim("wolf", seat=countered, role="seer"), False))
    elif fake:
        # a clean reading, never a wolf named: a villager named a wolf is lynched, his card
        # shown, and the fake proven a liar (the Witch poisons him: every_card_b/14, the pack
        # 23% against 16%). Clean on a partner (the Traitor on a wolf he knows, and the pack
        # spares him): a real Seer's reading of him later meets the fake's, and he is not
        # lynched on her word alone (500 games, the pack: every_card_b/14 32.4% against 23.8%
        # clean on a villager, 000/12 71.6% against 46.2%, 000/18 77.2% against 60.6%)
        pool = [s for s in living if s in mind.pack and s != mind.me] or \
            [s for s in living if s not in mind.pack and s != mind.me]
        if pool:
            target = min(pool, key=lambda s: _public(mind, s) + mind.rng.random())
            said.append((Claim("innocent", seat=target, role=fake), False))
    if mind.wolf_side():
        # talk as a villager would: name a seat only when the table already suspects it (a
        # wolf who accuses on no evidence stands out: loadtest.botplay, +10 points at 6 and 8 seats)
        rest = [s for s in living if s not in mind.pack and s != mind.me
                and SURE <= _public(mind, s) < KNOWN]
        if rest:
            said.append((Claim("wolf", seat=max(rest, key=lambda s: _public(mind, s))), True))
        return said
    trusted = [s for s in living if mind.trust(s) >= 0.5 and s != mind.me]
    if trusted:
        said.append((Claim("trust", seat=trusted[0]), False))
    suspects = [s for s in living if s != mind.me and SURE <= mind.score(s) < KNOWN
                or s in mind.found_wolves()]
    if suspects:
        said.append((Claim("wolf", seat=max(suspects, key=mind.score)), True))
    for voter, target in mind.questions[-2:]:
        if mind.alive[voter]:
            said.append((Claim("why_vote", seat=voter, target=target), True))
    if role in ("hunter", "idiot", "elder") and any(
            s == mind.me and wolf for readings in mind.said_wolf.values() for s, wolf in readings):
        said.append((Claim("role", role=role), False))  # named a wolf: show the card's threat
    return said
