"""One module per role (and one for the day): each registers its steps, death hooks and view
fields with `rules.table`. Adding a role = adding a module here and importing it below."""

from rules.roles import cupid, day, hunter, mayor, seer, werewolf, witch  # noqa: F401
