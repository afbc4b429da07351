"""review: the review of unknown codes from one address; a finished table's review (with
`--review-events` presence changes written into its lobby before it closes)."""
from __future__ import annotations

import time

from gateway.routes.rooms import REVIEW_BYTES
from loadtest.abuse.common import Target, client, counted, next_address, rss_mb, unknown_code


SHARED = ("finished",)  # it reviews the shared finished table


async def run(t: Target) -> list[dict]:
    stack, url, pinger, config = t.stack, t.url, t.pinger, t.config
    shared = t.shared
    limit, guesser = config.lookup_failures_per_address, next_address()
    t0 = time.monotonic()
    async with client(url, guesser) as http:
        tried = [(await http.get(f"/api/rooms/{unknown_code()}/review")).status_code
                 for _ in range(limit + 5)]
    took = time.monotonic() - t0
    finished = await shared.finished()
    room = finished["room"]
    async with client(url, guesser) as http:
        real = (await http.get(f"/api/rooms/{room}/review")).status_code
    rows = [{"probe": f"{limit + 5} reviews of unknown codes from one address "
                      f"(WW_LOOKUP_FAILURES_PER_ADDRESS={limit})",
             "result": f"{counted(tried)}; then a finished room's review from that address: {real}",
             "time": f"{took:.2f} s ({len(tried) / took:.0f}/s)", "rss": "-",
             "ping": pinger.p99(t0),
             "facts": {"statuses": tried, "real_from_guesser": real}}]
    t1, rss0 = time.monotonic(), rss_mb(stack)
    async with client(url) as http:
        answer = await http.get(f"/api/rooms/{room}/review")
    took = time.monotonic() - t1
    body = answer.json()
    rows.append({"probe": f"a finished table's review ({finished['presence_written']} presence "
                          f"changes written in its lobby)",
                 "result": f"{answer.status_code}: {len(body['events'])} events, "
                           f"{len(answer.content) / 1000:.0f} KB, truncated {body['truncated']} "
                           f"(at most {REVIEW_BYTES >> 20} MB of events)",
                 "time": f"{took * 1000:.0f} ms", "rss": f"{rss0:.0f} -> {rss_mb(stack):.0f} MB",
                 "ping": pinger.p99(t1),
                 "facts": {"status": answer.status_code, "events": len(body["events"]),
                           "bytes": len(answer.content), "truncated": body["truncated"],
                           "written": finished["presence_written"]}})
    return rows
