// The end of a game as the end screen and the review show it: the banner's card and the reason,
// for every win condition the rules declare (rules/roles/*.py, each role's `Win`): the banner is
// the card of the role that owns the condition (tests/client/test_events.py holds this to
// rules.registry), the reason's words are the catalogues' `end.reason.<reason>`. A reason this
// page does not know shows the generic card and a generic line.
import { t, has } from "./i18n.js";

const BANNER = {
  no_wolves_alive: "villager",
  only_wolves_alive: "werewolf", village_side_killed: "werewolf", wolves_at_parity: "werewolf",
  lovers_last_alive: "cupid", lovers_pair_alive: "lover",
  piper_charmed_all: "piper", fox_survives: "fox", white_werewolf_alone: "white_werewolf",
};

export function bannerRole(reason) {
  return BANNER[reason] ?? null;
}

export function reasonText(reason) {
  if (reason == null) return "";
  return has(`end.reason.${reason}`) ? t(`end.reason.${reason}`) : t("end.reason.unknown");
}
