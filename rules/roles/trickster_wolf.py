"""Trickster Wolf (001, "الذئب المحتال"): one of the pack in every way, but the Seer sees him as a
plain Villager. He takes one of the pack's seats (the wolves' count includes him)."""

from rules.role import Role

ROLE = Role(id="trickster_wolf", team="wolves", wolf=True, seen_as="villager")
