"""The shared polling helper: it returns what the check gave, says what it waited for and what it
last saw when the time is out, and leaves a check's own TimeoutError alone."""
import pytest

from tests.helpers import until, until_sync


async def test_until_returns_the_first_true_answer_of_a_plain_or_awaitable_check():
    answers = iter([0, None, "", 7])
    assert await until(lambda: next(answers), 5, "a number", every=0) == 7

    async def welcome():
        return {"seq": 3}
    assert await until(welcome, 5, "the welcome") == {"seq": 3}


async def test_until_names_what_it_waited_for_and_the_last_answer():
    with pytest.raises(TimeoutError, match=r"^a free slot: not within 0.05 s \(last: 0\)$"):
        await until(lambda: 0, 0.05, "a free slot", every=0.01)


async def test_a_timeout_the_check_raises_is_its_own():
    async def stuck():
        raise TimeoutError("the check's own")
    with pytest.raises(TimeoutError, match="^the check's own$"):
        await until(stuck, 5, "never")


def test_until_sync_describes_the_state_when_the_time_is_out():
    with pytest.raises(TimeoutError, match=r"^3 processes left: not within 0 s \(last: False\)$"):
        until_sync(lambda: False, 0, lambda: "3 processes left", every=0)
