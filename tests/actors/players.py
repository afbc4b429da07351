"""Test players: answer every open prompt the simplest legal way, so a game runs to its end."""
from __future__ import annotations


def answer(prompt: dict) -> list[int]:
    """The first choices, as many as the prompt needs (at least one where one is allowed)."""
    wanted = max(prompt["min"], min(1, prompt["max"]))
    return prompt["choices"][:wanted]


def act_frames(view: dict, frame_ids) -> list[dict]:
    """One `act` frame per prompt open in `view`."""
    return [{"type": "act", "id": next(frame_ids), "action": p["action"], "targets": answer(p)}
            for p in view.get("prompts", [])]
