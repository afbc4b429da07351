"""Views: for any seat, exactly what that player may know now."""

import json

import pytest

from rules import BadFrame, prompts_for, view
from tests.rules.driver import EIGHT_SEATS, Game

# seats: 0 wolf, 1 seer, 2 witch, 3 hunter, 4 cupid, 5 villager, 6 wolf, 7 villager
DEAL = EIGHT_SEATS


def test_a_seat_sees_its_own_card_and_no_other_hidden_card():
    game = Game(DEAL)
    for seat, role in enumerate(DEAL):
        seen = view(game.state, seat)
        assert seen["me"] == {"seat": seat, "role": role, "alive": True}
        assert [s["role"] for s in seen["seats"]] == [role if s == seat else None
                                                      for s in range(8)]


def test_the_dead_see_revealed_cards_only():
    game = Game(DEAL)
    game.night(link=[5, 7], victim=5)
    seen = game.view(5)
    assert seen["me"]["alive"] is False
    assert {s["seat"]: s["role"] for s in seen["seats"] if s["role"]} == {5: "villager",
                                                                          7: "villager"}


def test_the_view_is_json_with_seat_keys_as_decimal_strings():
    game = Game(DEAL)
    game.night(victim=None)
    game.act(0, "mayor.elect", [5])
    seen = game.view(3)
    assert seen["votes"] == {"0": 5} and seen["tally"] == {"5": 1}
    assert json.loads(json.dumps(seen)) == seen


def test_open_prompts_appear_in_the_view_as_the_prompt_events_did():
    game = Game(DEAL)
    prompt = {k: v for k, v in game.events("prompt")[-1].items() if k != "to"}
    assert game.view(4)["prompts"] == [prompt] == prompts_for(game.state, 4)
    assert game.view(0)["prompts"] == []


def test_at_night_the_table_waits_for_a_role_never_for_named_seats():
    game = Game(DEAL)
    assert game.view(7)["waiting"] == {"action": "cupid.link", "seats": None}
    game.timeout()
    assert game.view(7)["waiting"] == {"action": "seer.inspect", "seats": None}


def test_by_day_the_table_names_who_it_waits_for():
    game = Game(DEAL)
    game.night(victim=None)
    game.elect(None)
    game.act(2, "vote.request", [])
    assert game.view(0)["waiting"] == {"action": "vote.request",
                                       "seats": [0, 1, 3, 4, 5, 6, 7]}


def test_a_view_for_a_seat_not_at_the_table_is_refused():
    game = Game(DEAL)
    for seat in (-1, 8, "1", None):
        with pytest.raises(BadFrame):
            view(game.state, seat)


def test_role_fields_are_null_for_the_other_seats():
    game = Game(DEAL)
    fields = ("wolves", "lover", "linked", "seer_results", "witch", "pointing")
    seen = game.view(7)
    assert all(seen[f] is None for f in fields)
    assert seen["votes"] is None and seen["tally"] is None and seen["requests"] is None


@pytest.mark.parametrize("bound", [0, 1, 3, 10])
def test_a_chat_bound_keeps_the_last_lines_of_each_channel_and_counts_the_others(bound):
    game = Game(DEAL)
    game.night(victim=None)
    for n in range(3):
        game.say(n, f"line {n}")
    whole, bounded = view(game.state, 4), view(game.state, 4, bound)
    kept = [] if bound == 0 else whole["chat"]["day"][-bound:]
    assert bounded["chat"] == {"day": kept}
    assert bounded["chat_omitted"] == ({"day": 3 - bound} if bound < 3 else {})
    assert "chat_omitted" not in whole
