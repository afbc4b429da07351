"""The golden games' tables (tests/rules/test_golden.py records and replays them) and the folder
of their recorded logs."""
import pathlib

GOLDEN = pathlib.Path(__file__).parent / "golden"
# (file, players, settings, seed): tables chosen so that together they cover every event kind
SEED_000 = {"roles": ["seer", "witch", "hunter", "cupid"]}
TABLES = [
    ("six_all_roles", 6, SEED_000, 3),
    ("eight_all_roles", 8, SEED_000, 11),
    ("twelve_no_cupid", 12, {"roles": ["seer", "witch", "hunter"]}, 5),
    ("eighteen_all_roles", 18, SEED_000, 2),
    # seed 003's 16-with-the-game-master setup: Guard, Elder, Idiot, Scapegoat, no mayor
    ("fifteen_seed_003", 15, {"preset": "seed_003_15"}, 1),
    # seed 001's roles: Talkative Seer, Little Girl, Trickster Wolf; with the Guard and the Piper
    ("twelve_seed_001_piper", 12, {"roles": ["seer", "witch", "hunter", "cupid", "little_girl",
                                             "trickster_wolf", "piper", "guard"],
                                   "rules": {"seer_kind": "talkative",
                                             "little_girl_caught_chance": 50}}, 1),
    # seed 001's preset: the Thief steals, candidacy and a runoff for the mayor
    ("ten_seed_001", 10, {"preset": "seed_001"}, 1),
    # wolves 001 only names, and the Thief's two extra cards (002, 003): an infection, the
    # White Werewolf devouring a wolf and winning alone
    ("fourteen_named_wolves", 14, {"roles": ["seer", "witch", "guard", "cupid", "thief",
                                             "infect_father", "white_werewolf"]}, 6),
    # jinrou's "the dead see every card": a `cards` event to each seat as it dies
    ("eight_dead_see_roles", 8, {**SEED_000, "rules": {"dead_see_roles": "yes"}}, 7),
    # seed 004's preset at its smallest table (recommendedSetup: a wolf, the Seer, 2 Villagers)
    ("four_seed_004", 4, {"preset": "seed_004"}, 1),
    # seed 004's rules with every card it names: Medium, Traitor (knows the pack), Fox, the
    # Lover pair, Nekomata, Psycho Killer, Baker, Hunter, Guard; hidden cards
    ("eighteen_seed_004_cards", 18, {"preset": "seed_004", "roles": [
        "seer", "guard", "medium", "traitor", "fox", "lover", "nekomata", "psycho", "baker",
        "hunter"], "rules": {"traitor_knows_pack": "yes"}}, 13),
    # the genre's Two Sisters, who know each other from the deal
    ("nine_sisters", 9, {"roles": ["seer", "witch", "sisters"]}, 1),
]
