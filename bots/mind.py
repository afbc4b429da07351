"""What one seat knows and suspects, built from its frames only: the view it was shown and the
events its audience heard. Nothing here reads a game state."""
from __future__ import annotations

import random

from bots.claims import Claim, Reader
from rules import declaration

_CARDS = {card["id"]: card for card in declaration()["roles"]}
WOLF_CARDS = frozenset({"werewolf"} | {c for c, card in _CARDS.items() if card["wolf"]})
# cards that play for the pack without being wolves (they know it, or learn it: the Traitor)
PACK_SIDE = frozenset(c for c, card in _CARDS.items() if card["team"] == "wolves") | WOLF_CARDS
# what the village must vote out: the pack's side and the cards that win alone (the Piper, the
# Fox, the White Werewolf), whose win takes the village's; a reader names them all "werewolf"
ENEMIES = PACK_SIDE | frozenset(c for c, card in _CARDS.items()
                                if card["team"] not in ("village", "wolves"))
# the weight of the Piper's threat, shared among the seats he may be (every_card_a/18, 200
# games, the Piper's wins: 53 at 0, 49 at 8, 46 at 16 and at 32)
PIPER_THREAT = 16.0
# readings: the Seer's under `seer_result = wolf_or_not`, or a card
NOT_WOLF = "not_werewolf"

UNIQUE = frozenset(c for c, card in _CARDS.items() if card["cards"] == 1)
KNOWN = 100.0  # a suspicion that is no longer one: the seat's side is known
LIAR = 10.0  # a claimant proven to lie about his card: nearly sure of the pack's side
# a vote against a reader's claimant this trusted is asked about: only an uncontested one (one
# of two rivals for the card is a liar: a vote on either is the village's best guess, and the
# questions about it lynched villagers)
TRUSTED = 1.0


class Mind:
    """Knowledge (cards seen, the pack, readings) and a suspicion score per seat (higher: more
    likely a wolf) fed by public events: deaths and cards shown, votes, claims."""

    def __init__(self, seat: int, rng: random.Random):
        self.me = seat
        self.rng = rng
        self.names: list[str] = []
        self.reader: Reader | None = None
        self.role: str | None = None
        self.alive: list[bool] = []
        self.cards: dict[int, str] = {}  # seat -> card the table (or I) was shown
        self.pack: set[int] = set()  # wolves I know (as a wolf, the Traitor, infected)
        self.friends: set[int] = set()  # lovers, sisters: known to be on my side
        self.readings: dict[int, bool] = {}  # seat -> is a wolf (my own Seer/Medium readings)
        self.read_cards: dict[int, str] = {}  # seat -> the card my reading showed
        self.claimed: dict[int, str] = {}  # seat -> card it claimed
        self.holders: dict[str, int] = {}  # unique card -> its holder, shown or vouched dead
        self.said_wolf: dict[int, list[tuple[int, bool]]] = {}  # claimant -> (seat, wolf?)
        self.accused: dict[int, set[int]] = {}  # speaker -> seats it named wolves
        self.suspicion: dict[int, float] = {}
        self.votes: dict[int, dict[int, int]] = {}  # day -> voter -> target (the day's last)
        # the vote under way: voter -> target (None: abstains)
        self.ballot: dict[int, int | None] = {}
        self.mayor: int | None = None
        self.exiles: dict[int, bool] = {}  # day -> whether its vote sent someone out (so far)
        self.questions: list[tuple[int, int]] = []  # (voter, target): votes worth asking about
        self.phase = ""
        self.day = 0
        self.prompts: dict[str, dict] = {}  # action -> the open prompt
        self.pointed: int | None = None  # the pack's proposal tonight (the first one made)
        self.my_point: int | None = None
        self.pointing: dict[int, int] = {}  # wolf -> his point tonight (the pack's channel)
        self.my_claim: str | None = None  # the card I claimed at the table
        self.late = False  # the prompt being answered closes within `bot.LATE_MS`
        self.thief_cards: list[str] = []
        self.charmed: set[int] = set()  # the Piper's charmed seats, as told to them (and him)
        # the cards the table was told are dealt (None: not told)
        self.in_play: set[str] | None = None
        self.dealt: dict[str, int] = {}  # card -> how many the table was told are dealt
        self.house: dict = {}  # the table's house rules, as its view's settings tell them
        self.over = False

    # ------------------------------------------------------------------ frames

    def see(self, view: dict) -> None:
        """The seat's whole view (the welcome, a resync): replaces what it covers."""
        self.names = [s["name"] for s in view["seats"]]
        self.reader = Reader(self.names)
        self.alive = [s["alive"] for s in view["seats"]]
        for s in view["seats"]:
            if s["role"] is not None and s["seat"] != self.me:
                self._shown(s["seat"], s["role"])
            self.suspicion.setdefault(s["seat"], self.rng.random() * 0.2)
        self.role = view["me"]["role"]
        self.phase, self.day = view["phase"], view["day"]
        self.mayor = view.get("mayor")
        self.ballot = {int(s): t for s, t in (view.get("votes") or {}).items()}
        self.prompts = {p["action"]: p for p in view["prompts"]}
        self.pack |= set(view.get("wolves") or ())
        for result in view.get("seer_results") or ():
            self._read(result["seat"], result["role"])
        self.thief_cards = list(view.get("thief_cards") or ())
        self.charmed = set(view.get("charmed") or ())
        if view.get("roles_in_play") is not None:
            self._on_game_started(view)
        if view.get("settings"):
            self.house = dict(view["settings"].get("rules") or {})
        # told at the deal (a bot starting then gets the view, not the deal's events)
        told = set(view.get("lover_pair") or ()) | set(view.get("sisters") or ())
        if view.get("lover") is not None:
            told.add(view["lover"])
        self.friends |= told - {self.me}
        for line in (view.get("chat") or {}).get("day", ()):
            self._chat(line)
        self.over = view["outcome"] is not None

    def observe(self, event: dict) -> None:
        handler = getattr(self, "_on_" + event["kind"], None)
        if handler is not None:
            handler(event)

    def _on_game_started(self, e):
        self.dealt = {card: count for card, count in e["roles_in_play"].items() if count}
        self.in_play = set(self.dealt)

    def may_be_in_play(self, *cards: str) -> bool:
        return self.in_play is None or any(card in self.in_play for card in cards)

    def enemy(self, card: str) -> bool:
        """Whether a seat holding `card` must go for the village to win: the pack's side and the
        solo cards, and the dealt Lovers when they win as a pair (`lover_win = pair`, the
        default): alive together when the village wins, they take its win."""
        if card == "lover":
            return self.house.get("lover_win", "pair") == "pair" and self.role != "lover"
        return card in ENEMIES

    def _reads_as_enemy(self, role: str) -> bool:
        """A reading's card: a "villager" where no Villager is dealt (the table was told) is a
        card that shows itself as one, the Trickster or the Traitor (or a Thief who took a
        spare Villager)."""
        if role == NOT_WOLF:
            return False
        if role == "villager" and self.in_play is not None and "villager" not in self.in_play:
            return True
        return self.enemy(role)

    def _on_role(self, e):
        self.role = e["role"]

    def _on_phase(self, e):
        if e["phase"].startswith("night.") and not self.phase.startswith("night."):
            self.pointed = self.my_point = None
            self.pointing = {}
        self.phase, self.day = e["phase"], e["day"]
        self.ballot = {}  # each vote starts empty

    def _on_prompt(self, e):
        self.prompts[e["action"]] = e

    def _on_prompt_closed(self, e):
        self.prompts.pop(e["action"], None)

    def _on_wolves(self, e):
        self.pack = set(e["wolves"])

    _on_traitor_pack = _on_infected = _on_wolves

    def _on_pointed(self, e):
        if e["seat"] == self.me:
            self.my_point = e["target"]
        if e["target"] is None:
            self.pointing.pop(e["seat"], None)
        else:
            self.pointing[e["seat"]] = e["target"]
        if self.pointed is None and e["target"] is not None:
            self.pointed = e["target"]

    def _on_seer_result(self, e):
        self._read(e["seat"], e["role"])

    _on_medium_result = _on_seer_result

    def _on_thief_cards(self, e):
        self.thief_cards = list(e["cards"])

    def _on_lovers(self, e):
        self.friends |= set(e["lovers"]) - {self.me}

    _on_lover_pair = _on_lovers

    def _on_sisters(self, e):
        self.friends |= set(e["sisters"]) - {self.me}

    def _on_charmed(self, e):
        self.charmed = set(e["charmed"])

    def _on_death(self, e):
        seat = e["seat"]
        self.alive[seat] = False
        if e["cause"] in ("vote", "scapegoat"):
            self.exiles[self.day] = True
        if e["role"] is not None:
            self._shown(seat, e["role"])
        if e["cause"] == "psycho" and seat in self.pack and self.pointed is not None:
            self._shown(self.pointed, "psycho")  # our victim lives, our wolf died: the Psycho
        if e["cause"] in ("wolves", "night") and seat not in self.pack:
            # the pack's victims are not wolves: their claims were likely true
            self.suspicion[seat] = -KNOWN
            for target, wolf in self.said_wolf.get(seat, ()):
                self._accuse(target, 2.0 if wolf else -1.0)
            # the pack killed a reader: whoever claimed her card against her likely lied
            role = self.claimed.get(seat)
            for rival, claimed in self.claimed.items():
                if role in ("seer", "medium") and claimed == role and rival != seat:
                    self._accuse(rival, 5.0)

    def _on_idiot_revealed(self, e):
        self._shown(e["seat"], e["role"])
        self.exiles[self.day] = True

    def _on_mayor(self, e):
        self.mayor = e["seat"]

    def _on_voted(self, e):
        if e["phase"] not in ("day.vote", "day.revote"):
            return
        self.ballot[e["seat"]] = target = e["target"]
        self.exiles.setdefault(self.day, False)
        day = self.votes.setdefault(self.day, {})
        if target is None:  # withdrawn
            day.pop(e["seat"], None)
        else:
            day[e["seat"]] = target
            # against a trusted claimant (not by his rival for that card: of course she does)
            if self.trust(target) >= TRUSTED and e["seat"] != self.me \
                    and self.claimed.get(e["seat"]) != self.claimed.get(target):
                self._accuse(e["seat"], 0.8)
                self.questions.append((e["seat"], target))

    def _on_game_over(self, e):
        self.over = True

    def _on_chat(self, e):
        if e["channel"] in ("day", "wolves") and e["seat"] is not None:
            self._chat(e)

    # ------------------------------------------------------------------ reasoning

    def _shown(self, seat: int, card: str) -> None:
        self.cards[seat] = card
        wolf = self.enemy(card)
        self.suspicion[seat] = KNOWN if wolf else -KNOWN
        if card in UNIQUE:  # whoever else claimed this one card lied
            self._holds(seat, card, LIAR)
        # a claimant's readings proved right or wrong by a card shown
        for claimant, readings in self.said_wolf.items():
            for target, said in readings:
                if target == seat and claimant != self.me:
                    self._accuse(claimant, -3.0 if said == wolf else 6.0)
        self._votes_on(seat, wolf, 1.0)

    def _holds(self, seat: int, card: str, belief: float) -> None:
        """`seat` held the one `card`: its other claimants lied, and so will its next ones."""
        self.holders.setdefault(card, seat)
        for claimant, claimed in self.claimed.items():
            if claimed == card and claimant != seat:
                self._accuse(claimant, belief)

    def _votes_on(self, seat: int, wolf: bool, belief: float) -> None:
        """Who voted against a villager looks worse, against a wolf better."""
        for votes in self.votes.values():
            for voter, target in votes.items():
                if target == seat:
                    self._accuse(voter, belief * (-0.6 if wolf else 0.6))

    def _read(self, seat: int, role: str) -> None:
        wolf = self._reads_as_enemy(role)
        self.readings[seat] = wolf
        self.read_cards[seat] = role
        self.suspicion[seat] = KNOWN if wolf else -KNOWN
        self._votes_on(seat, wolf, 1.0)

    def _accuse(self, seat: int, amount: float) -> None:
        if abs(self.suspicion.get(seat, 0.0)) < KNOWN:
            self.suspicion[seat] = self.suspicion.get(seat, 0.0) + amount

    def _chat(self, line: dict) -> None:
        if self.reader is None:
            return
        claim = self.reader.parse(line["text"])
        if claim is not None:
            self.heard(line["seat"], claim, line["channel"])

    def heard(self, speaker: int, claim: Claim, channel: str) -> None:
        if channel == "wolves":
            if claim.kind == "attack" and self.pointed is None:
                self.pointed = claim.seat
            return
        if speaker == self.me:  # what the table heard me say, as the others record it
            if claim.role is not None and claim.kind in ("role", "wolf", "innocent"):
                self.my_claim = claim.role
            if claim.kind == "wolf" and claim.seat is not None:
                self.accused.setdefault(speaker, set()).add(claim.seat)
            return
        if claim.role is not None and claim.kind in ("role", "wolf", "innocent"):
            self._claim(speaker, claim.role)
        seat = claim.seat
        if seat is None:
            return
        if claim.kind in ("wolf", "innocent"):
            wolf = claim.kind == "wolf"
            if wolf:
                self.accused.setdefault(speaker, set()).add(seat)
            if claim.role is not None:
                self.said_wolf.setdefault(speaker, []).append((seat, wolf))
            self._judge_reading(speaker, seat, wolf, claim.role is not None)
        elif claim.kind == "why_vote":
            self._accuse(seat, 0.3)
        elif claim.kind == "trust":
            self._accuse(seat, -0.2)

    def _claim(self, speaker: int, role: str) -> None:
        before = self.claimed.get(speaker)
        self.claimed[speaker] = role
        if before not in (None, role):
            self._accuse(speaker, 4.0)  # claimed two cards
        if self.role == role and role in UNIQUE and self.role not in PACK_SIDE:
            self._accuse(speaker, KNOWN)  # claims the one card I hold: a liar
        holder = self.holders.get(role)
        if holder is not None and holder != speaker:
            self._accuse(speaker, LIAR)  # the card's holder is known: the claim is a lie
            return
        rivals = [s for s, r in self.claimed.items() if r == role and s != speaker]
        if role in ("seer", "medium") and rivals:
            for seat in (speaker, *rivals):
                self._accuse(seat, 0.5)

    def _judge_reading(self, speaker: int, seat: int, wolf: bool, reading: bool) -> None:
        if seat == self.me and self.role not in WOLF_CARDS:
            if wolf:
                self._accuse(speaker, KNOWN)  # a lie about me: the liar is a wolf
            return
        if reading and not self.alive[seat]:
            # a Medium's word on the dead checks the votes on that seat and what the Seers said
            self._votes_on(seat, wolf, self.trust(speaker))
            card = self.claimed.get(seat)
            if not wolf and card is not None and card in UNIQUE and self.trust(speaker) >= 0.5:
                self._holds(seat, card, LIAR * self.trust(speaker))  # a dead claimant vouched
            for claimant, readings in self.said_wolf.items():
                if claimant != speaker and any(t == seat for t, _ in readings):
                    said = next(w for t, w in readings if t == seat)
                    self._accuse(claimant, self.trust(speaker) * (-2.0 if said == wolf else 4.0))
        if seat in self.cards or seat in self.readings:
            truth = self.enemy(self.cards[seat]) if seat in self.cards else self.readings[seat]
            self._accuse(speaker, -2.0 if truth == wolf else 5.0)
            return
        # two claimants of one reader's card naming each other: what the fake says either way
        # (he counters the real one), so no reading of mine weighs it more than a bare word
        rival = self.claimed.get(seat) == self.claimed.get(speaker)
        weight = self.trust(speaker) * 4.0 if reading and not rival else 0.4
        self._accuse(seat, weight if wolf else -weight / 2)

    def _trusted(self, seat: int) -> bool:
        return self.trust(seat) >= 0.5

    def trust(self, seat: int) -> float:
        """How far I believe `seat`'s readings: a Seer or Medium claimant not proven a liar, the
        less when another claims the same card."""
        role = self.claimed.get(seat)
        if role not in ("seer", "medium", "little_girl") or self.suspicion.get(seat, 0) >= 3:
            return 0.0
        if seat in self.pack or self.readings.get(seat):
            return 0.0
        rivals = [s for s, r in self.claimed.items() if r == role and s != seat
                  and self.suspicion.get(s, 0) < 3]
        return 1.0 / (1 + len(rivals))

    def spoilers(self) -> bool:
        """Whether a card that takes the village's win, if alive when the last wolf goes, may
        still live (the table was told it is dealt, and no holder's card was shown): the dealt
        Lovers (as a pair) or the Fox. Not a worry of their own holders."""
        shown = set(self.cards.values())
        lovers = self.dealt.get("lover", 0) == 2 and self.enemy("lover") and "lover" not in shown
        fox = "fox" in self.dealt and self.role != "fox" and "fox" not in shown
        return lovers or fox

    def wolves_left(self) -> int | None:
        """The wolves dealt whose card was not shown dead (None: the deal or the cards are not
        told: hidden cards)."""
        if not self.dealt:
            return None
        dealt = sum(n for card, n in self.dealt.items() if card in WOLF_CARDS)
        return dealt - sum(1 for s, card in self.cards.items()
                           if card in WOLF_CARDS and not self.alive[s])

    def hunting(self) -> bool:
        """The last wolf must not go before the spoilers: the village votes them first."""
        left = self.wolves_left()
        return left is not None and left <= 1 and self.spoilers() and len(self.living()) >= 4

    # ------------------------------------------------------------------ for the policies

    def living(self) -> list[int]:
        return [s for s, alive in enumerate(self.alive) if alive]

    def wolf_side(self) -> bool:
        return self.role in PACK_SIDE

    def score(self, seat: int) -> float:
        """My suspicion of `seat`, with what I know for sure."""
        if seat in self.pack and self.role in WOLF_CARDS:
            return KNOWN
        if seat in self.friends:
            return -KNOWN
        return self.suspicion.get(seat, 0.0) + self.piper_threat(seat)

    def piper_threat(self, seat: int) -> float:
        """What a charmed seat knows: the Piper is one of the living seats not charmed, and wins
        once every other living seat is. The more are charmed and the fewer he may be, the more
        each of those seats is worth voting out."""
        if self.me not in self.charmed or seat in self.charmed or seat == self.me \
                or not self.alive[seat] or "piper" in self.cards.values():
            return 0.0
        living = self.living()
        suspects = [s for s in living if s not in self.charmed and s != self.me
                    and s not in self.cards and s not in self.friends]
        if seat not in suspects:
            return 0.0
        charmed = sum(1 for s in living if s in self.charmed)
        return PIPER_THREAT * charmed / (len(living) - 1) / len(suspects)

    def most_suspected(self, choices: list[int], noise: float = 0.3) -> int:
        return max(choices, key=lambda s: self.score(s) + self.rng.random() * noise)

    def least_suspected(self, choices: list[int], noise: float = 0.3) -> int:
        return min(choices, key=lambda s: self.score(s) + self.rng.random() * noise)

    def count(self, ballot: dict[int, int | None]) -> dict[int, int]:
        """The elimination vote's count of `ballot` (the mayor's vote weighs two)."""
        weights: dict[int, int] = {}
        for voter, target in ballot.items():
            if target is not None:
                weights[target] = weights.get(target, 0) + (2 if voter == self.mayor else 1)
        return weights

    def stalled(self) -> bool:
        """Yesterday's vote sent nobody out (a tie, or no votes)."""
        return self.exiles.get(self.day - 1) is False

    def found_wolves(self) -> list[int]:
        return [s for s, wolf in self.readings.items() if wolf and self.alive[s]]
