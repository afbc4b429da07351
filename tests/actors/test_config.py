import pytest

from actors.config import Config


def test_defaults_pack_many_games_per_actor():
    config = Config.from_env({})
    assert config.games_per_actor == 200  # packed: a Ray actor is a whole process
    assert config.prefix == "ww" and config.ray_address is None


def test_environment_and_overrides():
    config = Config.from_env({"REDIS_URL": "redis://r:1/2", "RAY_ADDRESS": "10.0.0.1:6380",
                              "WW_PREFIX": "p", "WW_GAMES_PER_ACTOR": "200", "WW_WARM_ACTORS": "2",
                              "WW_DURATION_DISCUSSION": "60"}, warm_actors=3)
    assert (config.redis_url, config.ray_address, config.prefix) == (
        "redis://r:1/2", "10.0.0.1:6380", "p")
    assert (config.games_per_actor, config.warm_actors) == (200, 3)
    assert config.durations == {"discussion": 60}
    assert config.room_settings().durations["discussion"] == 60
    assert Config.from_env({"WW_REQUEST_PATIENCE": "2.5"}).request_patience == 2.5
    assert Config.from_env({}).limit_window == 600
    assert Config.from_env({"WW_LIMIT_WINDOW": "3600"}).limit_window == 3600


def test_nonsense_is_refused():
    with pytest.raises(ValueError):
        Config.from_env({"WW_GAMES_PER_ACTOR": "0"})
    with pytest.raises(ValueError):
        Config.from_env({"WW_DURATION_NAP": "30"})
    with pytest.raises(ValueError):
        Config(durations={"vote": 0})
    with pytest.raises(ValueError):
        Config.from_env({"WW_LIMIT_WINDOW": "0"})


def test_host_resource_pins_game_hosts_to_nodes_that_offer_it_and_counts_their_room_slots():
    from actors.placement import host_options

    assert "resources" not in host_options(Config.from_env({}), "h")
    config = Config.from_env({"WW_HOST_RESOURCE": "werewolf_host", "WW_GAMES_PER_ACTOR": "50",
                              "WW_HOST_START_WAIT": "30"})
    assert host_options(config, "h")["resources"] == {"werewolf_host": 50}
    assert config.host_start_wait == 30
    with pytest.raises(ValueError):
        Config(host_start_wait=0)
