"""A prefix belongs to one Ray cluster at a time (actors/ownership.py), on the real Redis."""
import pytest

from actors import ownership


async def test_one_cluster_owns_a_prefix_until_it_releases_it(redis, prefix):
    await ownership.claim(redis, prefix, "session_a")
    await ownership.claim(redis, prefix, "session_a")  # a renewal
    assert 0 < await redis.ttl(f"{prefix}:stack") <= ownership.STACK_LEASE
    with pytest.raises(ownership.PrefixTaken) as taken:
        await ownership.claim(redis, prefix, "session_b")
    assert "WW_PREFIX" in str(taken.value) and "session_a" in str(taken.value)
    assert not await ownership.release(redis, prefix, "session_b")  # not b's to give back
    assert await ownership.owner(redis, prefix) == "session_a"
    assert await ownership.release(redis, prefix, "session_a")
    await ownership.claim(redis, prefix, "session_b")
    assert await ownership.owner(redis, prefix) == "session_b"
