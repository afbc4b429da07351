"""A table played from the deal through its first day's vote (issue 22's move-in-view and motion
tests): every page answers its prompts as tests/client/table.py's players do, and stops once the
host's page has left the vote (or the game has ended on it)."""
from __future__ import annotations

import asyncio

from tests.client.table import GAME_MS, THE_END, Player, play_all, record_events, shown

VOTED = "body[data-phase='day.vote']"
LEFT_THE_VOTE = "body[data-checked]"


async def watch_events(player: Player) -> list[dict]:
    """The events this page receives from now on: its page reloaded (in the lobby) on a socket
    watched from its opening."""
    events = record_events(player)
    await player.page.reload()
    await player.page.wait_for_selector("#screen-lobby:not([hidden])")
    return events


async def play_through_first_vote(players: list[Player], on_prompt=None) -> None:
    host = players[0].page

    async def stop_after_the_vote() -> None:
        await shown(host, f"{VOTED}, {THE_END}")
        await shown(host, VOTED, want=False)
        for p in players:
            await p.page.evaluate("() => { document.body.dataset.checked = '1'; }")

    stopper = asyncio.ensure_future(stop_after_the_vote())
    try:
        await asyncio.wait_for(play_all(players, until=f"{LEFT_THE_VOTE}, {THE_END}",
                                        on_prompt=on_prompt),
                               GAME_MS / 1000)
    finally:
        stopper.cancel()
        await asyncio.gather(stopper, return_exceptions=True)
