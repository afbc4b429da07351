"""presses: one address presses "Play now" `--presses` times at once, each press an id of its own;
then the id of a press that was seated, sent again from another address with the same name."""
from __future__ import annotations

import asyncio
import secrets
import time

from loadtest.abuse.common import Target, client, counted, cpu_s, next_address

KIND = {"preset": "seed_000", "language": "en"}


def add_arguments(parser) -> None:
    parser.add_argument("--presses", type=int, default=120,
                        help="quick-play presses from one address at once")


def answered(response) -> str:
    """200, or the status and the refusal's code."""
    if response.status_code == 200:
        return "200"
    detail = response.json().get("detail")
    return f"{response.status_code} {detail.get('code') if isinstance(detail, dict) else ''}"


async def run(t: Target) -> dict:
    """One address's presses at once: past its burst they are refused before the gateway's app
    reads them, the rest count in the room limit and the seat cap (tests/gateway/test_limits.py
    holds those to their caps under requests at once), and a press id is no credential
    elsewhere."""
    url, count = t.url, t.args.presses
    presser, presses = next_address(), [secrets.token_urlsafe(12) for _ in range(t.args.presses)]
    gw0, t0 = cpu_s(t.stack), time.monotonic()
    async with client(url, presser) as http:
        answers = await asyncio.gather(*(
            http.post("/api/quickplay", json={"name": f"Presser{i}", "press": press, **KIND})
            for i, press in enumerate(presses)))
    took = time.monotonic() - t0
    seated = [(press, i, a.json()) for i, (press, a) in enumerate(zip(presses, answers))
              if a.status_code == 200]
    tables = {s["room"] for _, _, s in seated}
    opened = sum(s["seat"] == 0 for _, _, s in seated)
    reused = "-"
    if seated:
        press, i, first = seated[0]
        async with client(url, next_address()) as http:
            again = await http.post("/api/quickplay",
                                    json={"name": f"Presser{i}", "press": press, **KIND})
        reused = answered(again) if again.status_code != 200 else (
            "the first press's seat and token" if again.json()["token"] == first["token"]
            else "a seat of its own")
    return {"probe": f"one address presses \"Play now\" {count} times at once (its own id each; "
                     f"WW_QUICK_PLAYS_PER_ADDRESS={t.config.quick_plays_per_address}, "
                     f"WW_QUICK_PLAY_BURST={t.config.quick_play_burst} then one per "
                     f"{t.config.quick_play_pace:g} s, "
                     f"WW_OPEN_LOBBIES_PER_ADDRESS={t.config.open_lobbies_per_address}, "
                     f"WW_LOBBY_SEATS_PER_ADDRESS={t.config.lobby_seats_per_address}); then a "
                     f"seated press's id from another address",
            "result": f"{counted(answered(a) for a in answers)}: {len(seated)} seated at "
                      f"{len(tables)} table(s), {opened} opened by the presses; the id again "
                      f"from elsewhere: {reused}",
            "time": f"{took:.1f} s", "cpu": f"gateway {cpu_s(t.stack) - gw0:.2f} s", "rss": "-",
            "ping": t.pinger.p99(t0),
            "facts": {"answers": [answered(a) for a in answers], "seated": len(seated),
                      "seconds": took,
                      "tables": len(tables), "opened": opened, "reused": reused}}
