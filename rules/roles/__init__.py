"""The cast: one module per role (and one each for the mayor and the day), each declaring one
`rules.role.Role`. `UNITS` is the registry; `rules.registry` indexes it. Adding a role = its
module (with the events it owns: `Role.events`), its line here, its tests (a golden game holding
its events), its words in the client's catalogues and its picture (`gateway/static/roles/`):
the Two Sisters (`sisters.py`) took exactly that.
"""

from rules.roles import (audience, big_bad_wolf, cupid, day, elder, guard, hunter, idiot,
                         infect_father, little_girl, mayor, piper, scapegoat, seer, thief,
                         trickster_wolf, villager, werewolf, white_werewolf, witch)
from rules.roles import baker, fox, house, lover, medium, nekomata, psycho, traitor
from rules.roles import sisters

# In deal order: the public list of roles in play follows it.
UNITS = (
    werewolf.ROLE, seer.ROLE, witch.ROLE, hunter.ROLE, cupid.ROLE,
    guard.ROLE, elder.ROLE, idiot.ROLE, scapegoat.ROLE, little_girl.ROLE, trickster_wolf.ROLE,
    piper.ROLE, thief.ROLE, white_werewolf.ROLE, infect_father.ROLE, big_bad_wolf.ROLE,
    # seed 004's cards
    medium.ROLE, traitor.ROLE, fox.ROLE, lover.ROLE, nekomata.ROLE, psycho.ROLE, baker.ROLE,
    # the genre's (Millers Hollow, The Village)
    sisters.ROLE,
    villager.ROLE,
    day.UNIT, mayor.UNIT, audience.UNIT, house.UNIT,
)
