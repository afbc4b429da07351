"""A random game played command by command, every rule checked after each command and at its
end: tests/rules/test_properties.py plays thousands, tests/rules/roles/test_seed_004.py seed
004's."""

import random

import orjson

from rules import (ACTIONS, GameState, RulesError, Settings, act, advance, public_view, say,
                   start_game, view)
from rules.registry import CARDS, FACTS, STEPS
from rules.role import concealed
from rules.roles.werewolf import pack_grows_unseen
from rules.settings import deal, durations_that_apply

T0 = 1_700_000_000_000
MAX_COMMANDS = 3000  # far above the longest random game; reaching it means a game that never ends
# the commands of death reactions (the only ones the dead make) -> the pending kind they answer
DEATH_REACTIONS = {action: step.phase for step in STEPS.values() if step.reaction
                   for action in step.actions}
MALFORMED = [None, "1", 1.5, True, [1], {"seat": 1}]
# the cards' declared sides (rules.roles): a new role needs no line here
PACK = {r for r, card in CARDS.items() if card.wolf}
TEAM = {r: card.team for r, card in CARDS.items()}
PLAIN = {r for r, card in CARDS.items() if card.plain}  # a Thief who took nothing too (O9)
PRIVATE_ROLE_FIELDS = {"seer_results": {"seer"},
                       "witch": {"witch"}, "linked": {"cupid"}, "guard": {"guard"},
                       "little_girl": {"little_girl"}, "medium_results": {"medium"},
                       "pack": {"traitor"}, "lover_pair": {"lover"}, "sisters": {"sisters"}}


def play(n: int, table: Settings, seed: int, rng: random.Random):
    """A random game, checked command by command; returns (start, commands, events, state)."""
    names = [f"p{i}" for i in range(n)]
    state, events = start_game(names, table, seed, T0)
    check_deck(state, table)
    start = (names, table, seed, T0)
    commands, log = [], list(events)
    check_events(state, state, events)
    check_views(state, list(range(n)))
    # the lobby shows only these durations: no other phase may ever be timed at this table
    timed = set(durations_that_apply(table, deal(n, table)))
    now = T0
    while state.phase != "over":
        assert len(commands) < MAX_COMMANDS, "the game does not end"
        now += rng.choice((0, 0, 500, 5000))
        before = state
        command = choose(rng, state, now)
        snapshot = orjson.dumps(vars(state)) if rng.random() < 0.3 else None
        try:
            state, events = run(state, command)
        except RulesError:
            continue
        finally:
            # Refused or not, the state a command was given is never changed.
            assert snapshot is None or orjson.dumps(vars(before)) == snapshot
        commands.append(command)
        log += events
        assert state.deadline is None or STEPS[state.phase].duration in timed, state.phase
        if command[0] == "advance":  # every running phase has a deadline in the future
            # (004's discussion may have no timer at all)
            assert state.phase == "over" or state.deadline is None or state.deadline > command[1]
        check_command(before, state, command)
        check_events(before, state, events)
        check_timing(before, command, events)
        if state.phase != before.phase or rng.random() < 0.05:
            check_views(state, rng.sample(range(n), 4))
            assert GameState.from_json(orjson.loads(orjson.dumps(state.to_json()))) == state
    return start, commands, log, state


def choose(rng: random.Random, state: GameState, now: int) -> tuple:
    n = len(state.roles)
    roll = rng.random()
    if roll < 0.6 and state.prompts:
        prompt = rng.choice(state.prompts)
        k = rng.randint(prompt["min"], min(prompt["max"], len(prompt["choices"])))
        return ("act", prompt["seat"], prompt["action"], rng.sample(prompt["choices"], k), now)
    if roll < 0.72:  # anything at all: mostly illegal
        return ("act", rng.randrange(-1, n + 1), rng.choice(sorted(ACTIONS) + ["oops"]),
                rng.sample(range(-1, n + 1), rng.randint(0, 3)), now)
    if roll < 0.75:  # malformed shapes
        return ("act", rng.choice(MALFORMED + [0]), rng.choice(MALFORMED + ["vote"]),
                rng.choice(MALFORMED + [[None], []]), now)
    if roll < 0.85:
        return ("say", rng.choice(range(n) if rng.random() < 0.95 else MALFORMED),
                rng.choice(["hi", " ", "x" * 501, "wolf!", None, 5]), now)
    return ("advance", max(now, state.deadline or now))


def run(state: GameState, command: tuple):
    if command[0] == "act":
        return act(state, *command[1:])
    if command[0] == "say":
        return say(state, *command[1:])
    return advance(state, command[1])


def infected(state: GameState) -> int | None:
    return state.memo.get("infect_father", {}).get("infected")


def pack(state: GameState) -> set:
    """The wolves' seats: their cards, and the one the Infect Father turned."""
    return {s for s, r in enumerate(state.roles) if r in PACK} | (
        {infected(state)} if infected(state) is not None else set())


def team(state: GameState, seat: int) -> str:
    return "wolves" if seat == infected(state) else TEAM[state.roles[seat]]


def check_command(before: GameState, after: GameState, command: tuple) -> None:
    if command[0] != "act":
        return
    _, seat, action, targets, _ = command
    if action == "white_werewolf.devour":  # every second night, another wolf
        assert before.day % 2 == 0 and set(targets) <= pack(before) - {seat}
    if action == "big_bad_wolf.devour":  # a second victim while no wolf card has died
        assert all(a or r not in PACK for r, a in zip(before.roles, before.alive))
        assert before.memo["night"]["victim"] not in targets
    last = before.memo.get("guard")
    if action == "guard.protect" and targets and last and last["night"] == before.day - 1 \
            and before.settings["rules"]["guard_repeat"] == "forbidden":
        assert targets != [last["seat"]]  # never the same seat two nights running
    if not before.alive[seat]:
        # The dead act only to shoot (hunter) or name a successor (mayor) as they die.
        assert {"kind": DEATH_REACTIONS[action], "seat": seat} in before.pending


def check_timing(before: GameState, command: tuple, events: list) -> None:
    """Where the table cannot see every card (hidden cards, or a pack it cannot count), a night
    step ends only at its deadline: how long it ran tells nothing of who holds a card, lives,
    answered or points (O1, D16)."""
    step = STEPS.get(before.phase)
    if step is None or step.night_order is None or not (
            concealed(before) or (step.phase == "night.wolves" and pack_grows_unseen(before))):
        return
    if any(e["kind"] == "phase" for e in events):
        assert command[0] == "advance" and command[1] >= before.deadline, (before.phase, command)


def check_events(before: GameState, after: GameState, events: list) -> None:
    roles = after.roles
    wolves = pack(after)
    for event in events:
        kind, to = event["kind"], event["to"]
        orjson.dumps(event)  # also refuses non-string keys
        if kind in ("role", "prompt", "prompt_closed", "seer_result", "witch_victim",
                    "medium_result", "traitor_pack"):
            assert len(to) == 1
        if kind == "role":
            assert roles[to[0]] == event["role"]
        elif kind == "seer_result":
            assert roles[to[0]] == "seer"
        elif kind == "witch_victim":
            assert roles[to[0]] == "witch"
        elif kind in ("wolves", "pointed"):
            assert set(to) <= wolves
        elif kind == "lovers":
            assert set(to) <= set(event["lovers"]) | {roles.index("cupid")}
        elif kind == "chat":
            channel = event["channel"]
            if channel == "wolves" and event.get("overheard"):  # the Little Girl, peeking
                assert [roles[s] for s in to] == ["little_girl"] and event["seat"] is None
                assert before.phase == "night.wolves" and event["name"].isalpha()
            elif channel == "wolves":
                assert set(to) <= wolves and all(before.alive[s] for s in to)
            elif channel == "dead":
                assert not any(after.alive[s] for s in to)
            else:
                assert to is None
        elif kind == "death":
            # the card shows unless the rule for its cause hides it until the end (004)
            rule = "reveal_exile" if event["cause"] in ("vote", "scapegoat") \
                else "reveal_night_deaths"
            hidden = after.settings["rules"][rule] == "no"
            assert to is None and event["role"] == (None if hidden else roles[event["seat"]])
            assert not after.alive[event["seat"]]
        elif kind == "medium_result":
            assert roles[to[0]] == "medium" and not after.alive[event["seat"]]
        elif kind == "traitor_pack":
            assert roles[to[0]] == "traitor" and set(event["wolves"]) == wolves
        elif kind == "lover_pair":
            assert set(to) == set(event["lovers"]) and all(roles[s] == "lover" for s in to)
        elif kind == "sisters":
            assert set(to) == set(event["sisters"]) and all(roles[s] == "sisters" for s in to)
        elif kind == "peeked":  # letters for the wolves, never their seats
            assert roles[to[0]] == "little_girl" and len(to) == 1
            assert all(isinstance(label, str) and label.isalpha() for label in event["pointing"])
        elif kind == "charmed":
            assert set(to) <= set(event["charmed"]) | {roles.index("piper")}
        elif kind == "little_girl_caught":
            assert set(to) <= wolves and roles[event["seat"]] == "little_girl"
        elif kind == "thief_cards":  # the cards set aside, to the Thief alone
            assert to == [after.memo["thief"]["seat"]] and len(event["cards"]) == 2
        elif kind == "infected":  # once per game, the pack's victim, told to him alone
            assert to == [infected(after)] and infected(before) is None
            assert roles[to[0]] not in PACK and set(event["wolves"]) <= wolves
        elif kind == "cards":  # every card, to a seat as it dies, only where the host chose it
            assert after.settings["rules"]["dead_see_roles"] == "yes"
            assert len(to) == 1 and not after.alive[to[0]] and event["cards"] == {
                str(s): r for s, r in enumerate(roles)}
        elif kind == "idiot_revealed":
            assert to is None and roles[event["seat"]] == event["role"] == "idiot"
            assert not before.memo.get("idiot")  # once per game
        else:
            assert to is None or kind in ("prompt", "prompt_closed"), kind
    check_facts_told(after, events)


# kind -> the card facts its event tells (rules.role.Fact `told_by`)
TOLD: dict[str, list] = {}
for _, _fact in FACTS.values():
    TOLD.setdefault(_fact.told_by, []).append(_fact)


def check_facts_told(after: GameState, events: list) -> None:
    """What an event tells of a card's fact, its hearers' views then hold: the client keeps the
    fact from the event alone until its next view (js/facts.js). (The pack told again after an
    infection names the living wolves; the infected's view names the dead ones too.)"""
    last = {}  # the last event of each kind: the views are those after all of them
    for event in events:
        last[event["kind"]] = event
    for event in last.values():
        for fact in TOLD.get(event["kind"], ()):
            for seat in event["to"]:
                held = view(after, seat)[fact.field]
                if fact.shape == "results":
                    assert held[-1] == {"seat": event["seat"], "role": event["role"],
                                        "night": after.day}, (fact.field, held, event)
                else:
                    assert set(event[fact.told_in]) <= set(held), (fact.field, held, event)


def check_views(state: GameState, seats: list) -> None:
    over = state.phase == "over"
    check_public_view(state)
    for seat in seats:
        role = state.roles[seat]
        seen = view(state, seat)
        orjson.dumps(seen)
        check_chat_bound(seen, view(state, seat, CHAT_BOUND))
        if over:
            continue
        revealed = state.memo.get("revealed", [])
        hidden = state.memo.get("hidden", [])
        if seen["cards"] is not None:
            assert not state.alive[seat] and state.settings["rules"]["dead_see_roles"] == "yes"
        for other in seen["seats"]:
            if other["role"] is not None:
                assert other["seat"] in [seat, *revealed] or (
                    not state.alive[other["seat"]] and other["seat"] not in hidden)
        for field in ("wolves", "pointing"):
            if seen[field] is not None:
                assert seat in pack(state), field
        for field, holder in PRIVATE_ROLE_FIELDS.items():
            if seen[field] is not None:
                assert role in holder, field
        if seen["thief_cards"] is not None:
            assert seat == state.memo["thief"]["seat"]
        if seen["charmed"] is not None:
            assert role == "piper" or seat in state.memo["piper"]["charmed"]
        if seen["lover"] is not None:
            assert seat in state.memo["cupid"]["lovers"]
        if not state.alive[seat]:
            assert {p["action"] for p in seen["prompts"]} <= set(DEATH_REACTIONS)
        for channel, lines in seen["chat"].items():
            # the wolves' lines only as a wolf: a wolf robbed by the Thief keeps those he read
            wolf_lines = channel == "wolves" and (seat in pack(state) or all(
                seat in line["to"] for line in state.chat if line["channel"] == "wolves"
                and {k: v for k, v in line.items() if k != "to"} in lines))
            assert channel == "day" or wolf_lines or (channel == "dead" and not state.alive[seat])


def village_side_gone(state: GameState) -> bool:
    """003's 屠边 / 屠城: a dealt village group all dead, while a wolf who plays for the pack
    lives (an infected villager is of the pack, no longer of a village group)."""
    rule = state.settings["rules"]["wolves_win"]
    if rule not in ("kill_side", "kill_all"):
        return False
    alive = [s for s, a in enumerate(state.alive) if a]
    if not any(team(state, s) == "wolves" for s in alive if s in pack(state)):
        return False
    plain = [s for s, r in enumerate(state.roles) if r in PLAIN and s not in pack(state)]
    powered = [s for s, r in enumerate(state.roles) if r not in PLAIN
               and TEAM[r] == "village" and s not in pack(state)]
    return any(group and not any(state.alive[s] for s in group)
               for group in ((plain + powered,) if rule == "kill_all" else (plain, powered)))


def check_deck(state: GameState, table: Settings) -> None:
    """The Thief's extra cards: the seats and the two cards aside are the deal and the extras;
    none aside is a special role, and a wolf is dealt (O8)."""
    aside = state.memo.get("thief", {}).get("aside", [])
    assert len(aside) == (2 if "thief" in table.roles and
                          table.rules["thief_mode"] == "extra_cards" else 0)
    assert set(aside) <= {"villager", "werewolf"}
    assert any(r in PACK for r in state.roles)


# A view's chat bound, small enough that random games' chat passes it.
CHAT_BOUND = 2


def check_chat_bound(seen: dict, bounded: dict) -> None:
    """A view with a chat bound is the whole view with the last CHAT_BOUND lines of each channel,
    and counts the others."""
    assert bounded.pop("chat_omitted") == {channel: len(lines) - CHAT_BOUND
                                           for channel, lines in seen["chat"].items()
                                           if len(lines) > CHAT_BOUND}
    assert bounded == {**seen, "chat": {channel: lines[-CHAT_BOUND:]
                                        for channel, lines in seen["chat"].items()}}


def check_public_view(state: GameState) -> None:
    """A spectator's view: the shape of a seat's, with nothing of any seat's before the end."""
    seen = public_view(state)
    check_chat_bound(seen, public_view(state, CHAT_BOUND))
    assert set(seen) == set(view(state, 0)) and orjson.dumps(seen)
    if state.phase == "over":
        return
    revealed = state.memo.get("revealed", [])
    hidden = state.memo.get("hidden", [])
    for other in seen["seats"]:
        assert other["role"] is None or other["seat"] in revealed or (
            not state.alive[other["seat"]] and other["seat"] not in hidden)
    assert seen["me"] is None and seen["prompts"] == [] and seen["channels"] == []
    assert set(seen["chat"]) <= {"day"}
    public = {"phase", "day", "deadline", "seats", "waiting", "mayor", "chat", "channels",
              "prompts", "outcome", "votes", "tally", "requests", "me"}
    assert all(seen[field] is None for field in set(seen) - public), seen
    assert not (seen["requests"] or {}).get("mine")


def check_outcome(state: GameState, commands: list, log: list) -> None:
    alive = [s for s, a in enumerate(state.alive) if a]
    wolves_alive = [s for s in alive if s in pack(state)]
    lovers = state.memo.get("cupid", {}).get("lovers") or []
    # mixed by the cards' teams when Cupid linked them (D35), or any pair with every_pair
    mixed = lovers if len({TEAM[state.roles[s]] for s in lovers}) == 2 or (
        state.settings["rules"]["lovers_team"] == "every_pair") else []
    side = lambda side: [s for s in range(len(state.roles))  # noqa: E731
                         if team(state, s) == side and s not in mixed]
    reason, winners = state.outcome["reason"], state.outcome["winners"]
    rules = state.settings["rules"]
    fox = state.roles.index("fox") if "fox" in state.roles else None
    pair = [s for s, r in enumerate(state.roles) if r == "lover"]
    # the pack at parity: the living wolves who play for it (a White Werewolf, a wolf among
    # mixed lovers counts among the others)
    pack_alive = [s for s in wolves_alive if team(state, s) == "wolves" and s not in mixed]
    # what the sides would win by (004's Fox and dealt pair take a side's win from it)
    counted = [s for s in alive if s not in pack_alive
               and not (state.roles[s] == "fox" and rules["fox_counted"] == "no")]
    side_holds = not wolves_alive or (rules["wolves_win"] == "parity" and pack_alive and
                                      len(pack_alive) >= len(counted)) or all(
        team(state, s) == "wolves" and s not in mixed for s in alive) or village_side_gone(state)
    if reason in ("fox_survives", "lovers_pair_alive"):
        assert side_holds
    if reason not in ("fox_survives", "piper_charmed_all", "lovers_last_alive",
                      "white_werewolf_alone") and fox is not None:
        # a side's win with a living Fox is his, unless the pair goes first
        assert not state.alive[fox] or (reason == "lovers_pair_alive"
                                        and rules["fox_lover_priority"] == "lover")
    if reason == "white_werewolf_alone":
        assert [state.roles[s] for s in alive] == ["white_werewolf"] and winners == alive
    elif reason == "fox_survives":
        assert state.alive[fox] and winners == [fox]
    elif reason == "lovers_pair_alive":
        assert rules["lover_win"] == "pair" and all(state.alive[s] for s in pair)
        assert winners == pair
    elif reason == "piper_charmed_all":
        piper = state.roles.index("piper")
        assert state.alive[piper] and winners == [piper]
        assert all(s in state.memo["piper"]["charmed"] for s in alive if s != piper)
    elif reason == "lovers_last_alive":
        assert sorted(alive) == lovers == mixed and winners == lovers
    elif reason == "no_wolves_alive":
        assert not wolves_alive
        assert winners == side("village")
    elif reason == "only_wolves_alive":
        assert wolves_alive and all(team(state, s) == "wolves" and s not in mixed for s in alive)
        assert winners == side("wolves")
    elif reason == "wolves_at_parity":
        # the Traitor counts among the humans; the Fox only with fox_counted (004)
        assert state.settings["rules"]["wolves_win"] == "parity"
        assert pack_alive and len(pack_alive) >= len(counted)
        assert winners == side("wolves")
    else:
        rule = state.settings["rules"]["wolves_win"]
        assert reason == "village_side_killed" and rule != "only_wolves"
        assert village_side_gone(state)
        assert winners == side("wolves")
    over = [e for e in log if e["kind"] == "game_over"]
    assert len(over) == 1 and over[0]["alive"] == alive
    for potion in ("witch.save", "witch.poison", "infect_father.infect"):
        assert sum(1 for c in commands if c[0] == "act" and c[2] == potion and c[3]) <= 1
    assert sum(1 for e in log if e["kind"] == "idiot_revealed") <= 1
    assert sum(1 for e in log if e["kind"] == "powers_lost") <= 1
