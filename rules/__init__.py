"""Werewolf rules engine."""
