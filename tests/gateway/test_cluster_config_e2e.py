"""A setting the cluster's placement and hosts read (games per actor, durations, TTLs...) has one
value per cluster: a second gateway given another refuses to start and names the setting and the
value the cluster runs with, instead of being silently ignored (issue 21 item 5)."""
import pytest

pytestmark = pytest.mark.e2e


def test_a_gateway_with_other_cluster_settings_refuses_to_start(stack):
    stack.start_gateway(games_per_actor=2, durations={"discussion": 30})
    with pytest.raises(RuntimeError) as refused:
        stack.start_gateway(games_per_actor=5, durations={"discussion": 30})
    assert "WW_GAMES_PER_ACTOR: here 5, the cluster runs 2" in str(refused.value)
    with pytest.raises(RuntimeError) as refused:
        stack.start_gateway(games_per_actor=2, durations={"discussion": 45})
    assert "WW_DURATION_*: here {'discussion': 45}, the cluster runs {'discussion': 30}" in str(
        refused.value)
    # the same settings, or another gateway-only one (a rate limit), start as usual
    stack.start_gateway(games_per_actor=2, durations={"discussion": 30},
                        env={"WW_ROOMS_PER_ADDRESS": "7"})
