"""What the test packages share: polling until a state holds.

Poll only a state the test cannot be told of (a counter behind HTTP, a key in Redis, a process
table, another process's output); an event the test can await is awaited instead."""
import asyncio
import inspect
import time
from collections.abc import Callable

What = str | Callable[[], str]


async def until(check, timeout: float, what: What, every: float = 0.1):
    """Ask `check()` (a value, or an awaitable of one) again every `every` s until it gives a true
    value, and return that value; after `timeout` s, TimeoutError naming `what` and the last
    answer. `what` is a description, or a function that gives one when the time is out (to say
    what the state was then). A TimeoutError that `check` itself raises is its own."""
    last = None
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            while True:
                answer = check()
                if inspect.isawaitable(answer):
                    answer = await answer
                if answer:
                    return answer
                last = answer
                await asyncio.sleep(every)
    except TimeoutError:
        if not deadline.expired():
            raise
        raise TimeoutError(_late(what, timeout, last)) from None


def until_sync(check, timeout: float, what: What, every: float = 0.5):
    """`until` for a test without an event loop: `check()` is a plain call."""
    deadline = time.monotonic() + timeout
    while not (answer := check()):
        if time.monotonic() > deadline:
            raise TimeoutError(_late(what, timeout, answer))
        time.sleep(every)
    return answer


def _late(what: What, timeout: float, last) -> str:
    return f"{what() if callable(what) else what}: not within {timeout:g} s (last: {last!r})"
