"""The game state: plain JSON-native data (str keys, lists, ints), so it round-trips exactly."""

from dataclasses import dataclass, fields


_CONTAINERS = (dict, list)


def _deep(value):
    """A copy of JSON-native data; scalars are shared (they are immutable). Every command clones
    the memo, so the scalars, most of it, are not even visited by a call."""
    if type(value) is dict:
        return {k: _deep(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if type(value) is list:
        return [_deep(v) if type(v) in _CONTAINERS else v for v in value]
    return value


@dataclass
class GameState:
    seed: int
    draws: int  # random draws taken so far; draw i uses Random(f"{seed}/{i}")
    settings: dict  # Settings.to_json()
    names: list
    roles: list
    alive: list  # a night's dead stay alive until dawn, so `not alive` = card revealed
    phase: str
    day: int
    deadline: int | None
    mayor: int | None
    # open prompts: {"seat", "action", "choices", "min", "max", "deadline"}
    prompts: list
    # per-role and per-phase data, keyed by owner ("cupid", "witch", "vote", ...)
    memo: dict
    # death reactions still to run, in order: {"kind": "hunter" | "successor", "seat": s}
    pending: list
    resume: str | None  # "day" or "night": where the game goes once the chain is resolved
    # chat lines with their readers: {"channel", "seat", "name", "text", "ts", "to"}
    chat: list
    outcome: dict | None  # {"winners": [...], "reason": str}

    def clone(self) -> "GameState":
        """A copy safe to mutate. names, roles, settings and chat lines are never mutated."""
        return GameState(
            seed=self.seed,
            draws=self.draws,
            settings=self.settings,
            names=self.names,
            roles=self.roles,
            alive=self.alive[:],
            phase=self.phase,
            day=self.day,
            deadline=self.deadline,
            mayor=self.mayor,
            prompts=self.prompts[:],
            memo=_deep(self.memo),
            pending=self.pending[:],
            resume=self.resume,
            chat=self.chat[:],
            outcome=self.outcome,
        )

    def to_json(self) -> dict:
        """The state as JSON-ready data, for serialising at once: it shares the state's lists
        and dicts (no copy on the hot path, the actor persists after every command), so it must
        not be mutated."""
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: dict) -> "GameState":
        return cls(**{f.name: _deep(data[f.name]) for f in fields(cls)})
