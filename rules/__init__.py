"""Werewolf rules engine: pure, deterministic, JSON-serialisable state. See RULES.md."""

from rules.engine import (ACTIONS, act, advance, dawn_shown, next_deadline, prompts_for,
                          public_view, round_done, say, start_game, view)
from rules.events import EVERYONE, EventKind, UndeclaredEvent
from rules.errors import (BadFrame, BadSettings, IllegalTarget, NotYourTurn, RoomClosed,
                          RulesError)
from rules.outcome import Outcome, outcome
from rules.presets import PRESETS
from rules.registry import EVENTS, SETTINGS, SPECIAL_ROLES
from rules.settings import FIELDS as SETTINGS_FIELDS
from rules.settings import (DEFAULT_DURATIONS, MAX_PLAYERS, MIN_PLAYERS, ROLES, Settings,
                            declaration, max_players, min_players, player_range,
                            roles_in_play, wolves_for)
from rules.state import GameState

__all__ = [
    "ACTIONS", "BadFrame", "BadSettings", "DEFAULT_DURATIONS", "EVENTS", "EVERYONE", "EventKind",
    "GameState", "IllegalTarget",
    "MAX_PLAYERS", "MIN_PLAYERS", "NotYourTurn", "Outcome", "PRESETS", "ROLES", "RoomClosed",
    "RulesError", "SETTINGS", "UndeclaredEvent", "SETTINGS_FIELDS", "SPECIAL_ROLES", "Settings",
    "act", "advance",
    "dawn_shown", "declaration",
    "max_players", "min_players", "next_deadline", "player_range", "outcome", "prompts_for",
    "public_view", "roles_in_play", "round_done", "say",
    "start_game", "view", "wolves_for",
]
