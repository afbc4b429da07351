"""The abuse suite's short probes, run once on the real stack so the suite never rots and what each
one found stays found (`python -m loadtest.abuse` on its own private stack: Ray head, a gateway,
the shared Redis under a fresh prefix; its rows with their raw figures in a JSON file).

In a process of its own, as the capacity command's test runs: the suite's driver joins its own Ray
head, which a test process already joined to the session's head cannot do.

Counts and answers only: refused, not seated, one room, the headers there. No wall-clock
threshold (the flood's bound is the rate limit applied to the seconds the run measured).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from actors.config import Config
from actors.room import RATE_LIMITS
from gateway.headers import SECURITY_HEADERS
from gateway.limits import SITE_SHARE
from loadtest.abuse import honest
from loadtest.abuse.common import SEATS

ROOT = Path(__file__).resolve().parents[2]
PROBES = "names,origin,headers500,review,again,flood,lobbies,proxy,presses,reports"
LOBBY_MAX_AGE = 12  # the stack's: the finished table and the lobbies' close wait for it
FLOOD = 300
SHIPPED = Config()

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> dict[str, list[dict]]:
    """probe name -> its rows (the facts of each), from one run of the short probes."""
    out = tmp_path_factory.mktemp("abuse") / "abuse.json"
    subprocess.run([sys.executable, "-m", "loadtest.abuse", "--only", PROBES, "--idle", "1",
                    "--lobby-max-age", str(LOBBY_MAX_AGE), "--flood", str(FLOOD),
                    "--flood-seconds", "0.3", "--flood-window", "1", "--json", str(out)],
                   cwd=ROOT, check=True, timeout=600)
    found: dict[str, list[dict]] = {}
    for row in json.loads(out.read_text()):
        found.setdefault(row.get("name", row["probe"]), []).append(row)
    return found


def facts(rows: dict, probe: str, index: int = 0) -> dict:
    return rows[probe][index]["facts"]


def test_look_alike_and_blank_names_are_not_seated_and_bad_chat_lines_are_refused(rows):
    names = facts(rows, "names")
    assert names["first"] == 200 and names["seated"] == 1
    assert set(names["look_alikes"].values()) <= {409, 422}
    assert set(names["blanks"].values()) == {422}
    chat = facts(rows, "names", 1)
    assert all(reply == ["error", "bad_frame"] for reply in chat["replies"].values())
    assert chat["plain"] == "ack"


def test_a_socket_from_another_site_is_refused(rows):
    assert rows["origin"][0]["result"] == "1008 bad_origin"


def test_every_refusal_carries_the_security_headers_and_metrics_need_their_token(rows):
    headers = facts(rows, "headers500")
    wanted = [name.decode() for name, _ in SECURITY_HEADERS]
    assert headers["wanted"] == wanted
    assert headers["statuses"]["uvicorn's 400 (a malformed request line)"] == 400
    assert 500 not in headers["statuses"].values()
    for label, present in headers["present"].items():
        assert present == wanted, label
    scraped = facts(rows, "headers500", 1)
    assert (scraped["no_token"], scraped["wrong"], scraped["token"]) == (401, 401, 200)
    assert scraped["metrics"]


def test_reviews_of_unknown_codes_are_throttled_and_a_review_is_bounded(rows):
    limit = SHIPPED.lookup_failures_per_address
    guesses = facts(rows, "review")
    assert guesses["statuses"] == [404] * limit + [429] * 5
    assert guesses["real_from_guesser"] == 429
    review = facts(rows, "review", 1)
    assert review["status"] == 200 and review["truncated"] is False and review["events"] > 0


def test_again_refuses_a_lone_surrogate_and_concurrent_clicks_open_one_room(rows):
    again = facts(rows, "again")
    assert 400 <= again["surrogate"] < 500
    assert set(again["clicks"]) == {200}
    assert len(again["rooms"]) == 1 and again["rooms"] == [again["next"]]
    assert again["stored"] == 1


def test_a_flood_of_commands_is_refused_by_the_socket(rows):
    flood = facts(rows, "flood")
    assert flood["sent"] == FLOOD
    assert flood["refused_here"] > 0
    assert flood["reached"] == flood["read"] - flood["refused_here"]
    assert flood["reached"] <= flood["allowed_through"] + 1
    burst, rate = RATE_LIMITS["chat"]
    assert flood["acked"] <= burst + rate * flood["answered_in"] + 1  # the room's own limit
    # Past its limit the socket is not read until a token is back (gateway/ws.py): each frame
    # refused there is followed by one let through, the rest waiting unread.
    assert flood["refused_here"] <= flood["reached"] + 1
    # 1008: refused by the gateway 20 times in a row; 1011: the flooder's own client gave up, its
    # keepalive ping unread behind its flood; 1006: the connection went before the close frame
    # reached the flooder (its own send buffer full behind the flood).
    assert flood["closed"] in (None, 1006, 1008, 1011)


def test_held_lobbies_cannot_fill_the_server(rows):
    limit = SHIPPED.open_lobbies_per_address
    one = facts(rows, "lobbies")
    assert one["statuses"] == [201] * limit + [429] and one["refusal"]["code"] == "rate_limited"
    assert one["other"] == 201
    site = facts(rows, "lobbies", 1)
    assert site["statuses"] == [201] * (SITE_SHARE * limit) + [429] * 4
    assert site["other_site"] == 201
    aged = facts(rows, "lobbies", 2)
    assert aged["closed_after"] >= LOBBY_MAX_AGE
    assert (aged["holder_again"], aged["other_after"]) == (201, 201)


@pytest.mark.skipif(shutil.which("haproxy") is None and not Path("/usr/sbin/haproxy").exists(),
                    reason="haproxy is not installed")
def test_behind_haproxy_the_limits_are_per_client(rows):
    proxy = facts(rows, "proxy")
    limit = SHIPPED.lookup_failures_per_address
    assert proxy["a_statuses"] == [404] * limit + [429]
    assert (proxy["a_forged"], proxy["a_join"]) == (429, 429)
    assert (proxy["b_room"], proxy["b_join"]) == (200, 200)
    assert proxy["metrics_via_proxy"] == 404


def test_quick_play_presses_past_an_address_s_burst_are_refused_and_an_id_is_no_credential(
        rows):
    presses = facts(rows, "presses")
    # 120 at once: the burst is seated (at most one more per pace while they came); the seat cap
    # under presses at once: tests/gateway/test_quickplay_e2e.py.
    burst, pace = SHIPPED.quick_play_burst, SHIPPED.quick_play_pace
    assert burst <= presses["seated"] <= burst + presses["seconds"] / pace + 1
    assert presses["opened"] == 1
    assert set(presses["answers"]) - {"200"} == {"429 rate_limited"}
    assert presses["reused"] == "a seat of its own"


def test_reports_are_bounded_per_room_point_at_the_chat_and_are_read_a_page_at_a_time(rows):
    reports = facts(rows, "reports")
    statuses = reports["statuses"]
    assert statuses.count("201") == SHIPPED.reports_per_room
    # 409 too_many_reports: the room's bound, or the seat's; 429: past the address's burst
    assert set(statuses) == {"201", "409", "429"}
    assert statuses.count("429") >= SEATS * (SEATS - 1 - SHIPPED.report_burst) - SEATS
    assert reports["read"] == SHIPPED.reports_per_room  # this stack's only reports
    # A report is its few hundred bytes and the reporter's text, never a copy of the chat.
    assert reports["stored_bytes"] < reports["chat_bytes"]


def test_the_honest_tables_are_measured_quiet_and_during_each_probe(tmp_path):
    """`--honest`: the honest tables' pings and chat acks, in the idle window, in a quiet window
    just before the probe, over the probe and in a second idle window after it, and their table
    printed (figures only, no threshold: the machine is shared)."""
    out = tmp_path / "honest.json"
    run = subprocess.run([sys.executable, "-m", "loadtest.abuse", "--only", "origin", "--idle", "2",
                          "--honest", "2", "--honest-sockets", "2", "--honest-window", "3",
                          "--quiet-before", "2", "--json", str(out)],
                         cwd=ROOT, check=True, timeout=600, capture_output=True, text=True)
    rows = json.loads(out.read_text())
    windows = {row["name"]: row["honest"] for row in rows if "honest" in row}
    assert list(windows) == ["idle", "origin", "idle, after"]
    (origin,) = [row for row in rows if row["name"] == "origin"]
    for window in (*windows.values(), origin["quiet"]):
        assert window["pings"] > 0 and window["acks"] > 0
        assert 0 < window["ping_p50"] <= window["ping_p99"]
        assert 0 < window["ack_p50"] <= window["ack_p99"]
        assert 0 <= window["stolen"] <= 100  # the host's share of the machine's CPU meanwhile
    assert "| origin |" in run.stdout.split("honest tables")[1]


def test_several_runs_are_read_on_each_probe_s_median_ratio_to_its_quiet_window():
    """`--medians`: each probe's p99 in each run, and the median of its ratios to the quiet window
    just before it (a probe within 2x in two runs of three is within on the median)."""
    def run(ping: float, ack: float) -> list[dict]:
        window = {"ping_p99": ping, "ack_p99": ack}
        return [{"name": "idle", "honest": window},  # the suite's first window: no quiet of its own
                {"name": "lobbies", "honest": window, "quiet": {"ping_p99": 2.0, "ack_p99": 4.0}}]
    lines = honest.medians([run(3.0, 4.0), run(9.0, 4.0), run(2.0, 16.0)])
    assert len(lines) == 3  # the header, its rule, one probe: the idle window has no ratio
    cells = [cell.strip() for cell in lines[2].strip("|").split("|")]
    assert cells == ["lobbies", "3 (0)", "3, 9, 2", "4, 4, 16", "1.50, 1.00", "2 of 3, 2 of 3"]
    # a run whose window, or its quiet one, lost CPU to the machine's host is left out
    stolen = run(40.0, 40.0)
    stolen[1]["quiet"] = {**stolen[1]["quiet"], "stolen": honest.STEAL_LIMIT + 1}
    cells = [cell.strip() for cell in honest.medians(
        [run(3.0, 4.0), stolen, run(2.0, 16.0)])[2].strip("|").split("|")]
    assert cells[:3] == ["lobbies", "2 (1)", "3, 2"]


def test_the_cpu_its_host_took_from_the_machine_is_read_over_a_window():
    load = object.__new__(honest.Honest)  # no player: the readings only
    load.cpu = [(10.0, 100, 1000), (10.5, 100, 1100), (11.0, 150, 1200), (11.5, 150, 1300)]
    assert load.stolen(10.2, 11.2) == pytest.approx(100 * 50 / 300)  # from 10.0 to 11.5
    assert load.stolen(10.5, 10.9) == pytest.approx(50.0)
    assert load.stolen(9.0, 10.9) is None  # no reading before it began
    stolen, everything = honest.cpu_jiffies()
    assert 0 <= stolen <= everything
