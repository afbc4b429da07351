"""Bots that hold a seat and play it from that seat's frames only (issue 33). Pure: no I/O, no
clock, no global random; imports `rules` only."""

from bots.bot import STYLES, Bot, Decision
from bots.claims import CATALOGUE, KINDS, LANGUAGES, ROLE_NAMES, Claim, Reader, render
from bots.selfplay import Game, play

__all__ = ["Bot", "CATALOGUE", "Claim", "Decision", "Game", "KINDS", "LANGUAGES", "ROLE_NAMES",
           "Reader", "STYLES", "play", "render"]
