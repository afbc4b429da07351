"""Structured chat lines: what a bot (or a human's one-tap quick claim) says, as data, and its
text in each of the table's languages.

A line is a `Claim`; in a chat payload it is `{"claim": {"kind": ..., "seat": ..., ...}}`. Its
text comes from the catalogue below, so any reader (a bot, a client) can read the claim back from
the text alone (`parse`): the chat events of today's engine carry text only. (The proposed next
step, for whoever wires quick claims into rooms: `say(..., claim=...)` stores the claim as an
optional `claim` field of the chat event, checked by the rules, so each reader renders it in its
own language and no reader has to parse.)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from rules import ROLES

LANGUAGES = ("en", "ar", "zh", "vi")

# kind -> its fields (beyond `kind`): `role` a card id, `seat`/`target` a seat number
KINDS = {
    "role": ("role",),             # I am the ROLE
    "wolf": ("seat", "role"),      # [I am the ROLE:] SEAT is a werewolf (role: the reading's card)
    "innocent": ("seat", "role"),  # [I am the ROLE:] SEAT is not a werewolf
    "vote": ("seat",),             # I vote SEAT
    "trust": ("seat",),            # I trust SEAT
    "why_vote": ("seat", "target"),  # Why did SEAT vote for TARGET?
    "attack": ("seat",),           # (the pack's channel) Let's take SEAT
}

# {role} is the card's name in the language, {seat}/{target} a seat's name. "wolf"/"innocent"
# have two forms: with the card that read them ("seer_wolf"), and a bare accusation.
CATALOGUE = {
    "en": {"role": "I am the {role}", "seer_wolf": "I am the {role}: {seat} is a werewolf",
           "seer_innocent": "I am the {role}: {seat} is not a werewolf",
           "wolf": "{seat} is a werewolf", "innocent": "{seat} is not a werewolf",
           "vote": "I vote {seat}", "trust": "I trust {seat}",
           "why_vote": "Why did {seat} vote for {target}?", "attack": "Let's take {seat}"},
    "ar": {"role": "أنا {role}", "seer_wolf": "أنا {role}: {seat} ذئب",
           "seer_innocent": "أنا {role}: {seat} ليس ذئبًا",
           "wolf": "{seat} ذئب", "innocent": "{seat} ليس ذئبًا",
           "vote": "أصوّت ضد {seat}", "trust": "أثق بـ{seat}",
           "why_vote": "لماذا صوّت {seat} ضد {target}؟", "attack": "لنأخذ {seat}"},
    "zh": {"role": "我是{role}", "seer_wolf": "我是{role}：{seat}是狼人",
           "seer_innocent": "我是{role}：{seat}不是狼人",
           "wolf": "{seat}是狼人", "innocent": "{seat}不是狼人",
           "vote": "我投{seat}", "trust": "我相信{seat}",
           "why_vote": "{seat}为什么投{target}？", "attack": "我们杀{seat}"},
    "vi": {"role": "Tôi là {role}", "seer_wolf": "Tôi là {role}: {seat} là Sói",
           "seer_innocent": "Tôi là {role}: {seat} không phải Sói",
           "wolf": "{seat} là Sói", "innocent": "{seat} không phải Sói",
           "vote": "Tôi bỏ phiếu {seat}", "trust": "Tôi tin {seat}",
           "why_vote": "Tại sao {seat} bỏ phiếu {target}?", "attack": "Giết {seat} đi"},
}

# The cards' names, as the client shows them (gateway/static/i18n/*.json "role.*"; a test keeps
# them equal): bots import nothing but `rules`, and read no file.
ROLE_NAMES = {
    "en": {"werewolf": "Werewolf", "seer": "Seer", "witch": "Witch", "hunter": "Hunter",
           "cupid": "Cupid", "guard": "Guard", "elder": "Elder", "idiot": "Village Idiot",
           "scapegoat": "Scapegoat", "little_girl": "Little Girl",
           "trickster_wolf": "Trickster Wolf", "piper": "Pied Piper", "thief": "Thief",
           "white_werewolf": "White Werewolf", "infect_father": "Infect Father of Wolves",
           "big_bad_wolf": "Big Bad Wolf", "medium": "Medium", "traitor": "Traitor",
           "fox": "Fox", "lover": "Lover", "nekomata": "Nekomata", "psycho": "Psycho Killer",
           "baker": "Baker", "sisters": "Two Sisters", "villager": "Villager"},
    "ar": {"werewolf": "ذئب", "seer": "العرّافة", "witch": "الساحرة", "hunter": "الصيّاد",
           "cupid": "كيوبيد", "guard": "الحارس", "elder": "الشيخ المعمّر", "idiot": "الأبله",
           "scapegoat": "كبش الفداء", "little_girl": "الفتاة الصغيرة",
           "trickster_wolf": "الذئب المحتال", "piper": "عازف المزمار", "thief": "السارق",
           "white_werewolf": "المستذئب الأبيض", "infect_father": "الذئب الأب المُعدي",
           "big_bad_wolf": "الذئب الشرير الكبير", "medium": "وسيط الأرواح", "traitor": "خائن",
           "fox": "ثعلب", "lover": "عاشق", "nekomata": "نيكوماتا", "psycho": "قاتل مختل",
           "baker": "خبّاز", "sisters": "الأختان", "villager": "قروي"},
    "zh": {"werewolf": "狼人", "seer": "预言家", "witch": "女巫", "hunter": "猎人",
           "cupid": "丘比特", "guard": "守卫", "elder": "长老", "idiot": "白痴",
           "scapegoat": "替罪羊", "little_girl": "小女孩", "trickster_wolf": "狡诈狼",
           "piper": "吹笛者", "thief": "盗贼", "white_werewolf": "白狼人",
           "infect_father": "狼父（感染者）", "big_bad_wolf": "大坏狼", "medium": "灵媒",
           "traitor": "叛徒", "fox": "狐狸", "lover": "恋人", "nekomata": "猫又",
           "psycho": "疯狂杀手", "baker": "面包师", "sisters": "双子姐妹", "villager": "村民"},
    "vi": {"werewolf": "Sói", "seer": "Tiên tri", "witch": "Phù thủy", "hunter": "Thợ săn",
           "cupid": "Thần tình yêu", "guard": "Bảo vệ", "elder": "Già làng",
           "idiot": "Thằng ngốc", "scapegoat": "Kẻ thế thân", "little_girl": "Cô bé",
           "trickster_wolf": "Sói lừa đảo", "piper": "Người thổi sáo", "thief": "Ăn trộm",
           "white_werewolf": "Sói Trắng", "infect_father": "Sói Cha Lây Nhiễm",
           "big_bad_wolf": "Sói Xấu Xa Lớn", "medium": "Đồng cốt", "traitor": "Kẻ phản bội",
           "fox": "Cáo", "lover": "Người tình", "nekomata": "Nekomata",
           "psycho": "Sát nhân điên", "baker": "Thợ làm bánh", "sisters": "Hai chị em",
           "villager": "Dân làng"},
}


@dataclass(frozen=True)
class Claim:
    kind: str
    seat: int | None = None
    role: str | None = None
    target: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim: unknown kind {self.kind!r}")
        if self.role is not None and self.role not in ROLES:
            raise ValueError(f"claim: unknown card {self.role!r}")
        needed = set(KINDS[self.kind]) - {"role"} if self.kind != "role" else {"role"}
        if any(getattr(self, name) is None for name in needed):
            raise ValueError(f"claim {self.kind}: {sorted(needed)} expected")

    def to_json(self) -> dict:
        return {"kind": self.kind, **{name: getattr(self, name) for name in KINDS[self.kind]
                                      if getattr(self, name) is not None}}

    @classmethod
    def from_json(cls, data: dict) -> Claim:
        """The claim of a chat payload's `claim` (ValueError if it is not one)."""
        if (not isinstance(data, dict)
                or set(data) - {"kind", *KINDS.get(str(data.get("kind")), ())}):
            raise ValueError(f"claim: not a claim: {data!r}")
        for name in ("seat", "target"):
            if name in data and type(data[name]) is not int:
                raise ValueError(f"claim: {name} must be a seat number")
        return cls(**data)


def _template(claim: Claim, language: str) -> str:
    key = f"seer_{claim.kind}" if claim.kind in ("wolf", "innocent") and claim.role else claim.kind
    return CATALOGUE[language][key]


def render(claim: Claim, language: str, names: list[str]) -> str:
    """The claim's line in `language`, naming seats by `names`."""
    def name(seat):
        return names[seat] if seat is not None else ""
    return _template(claim, language).format(
        role=ROLE_NAMES[language].get(claim.role or "", ""), seat=name(claim.seat),
        target=name(claim.target))


class Reader:
    """Reads claims back from chat lines at one table (its seats' names), in any language."""

    def __init__(self, names: list[str]):
        alternatives = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
        self._seat_of = {name: seat for seat, name in enumerate(names)}
        self._patterns: list[tuple[re.Pattern, str, dict]] = []
        for language, templates in CATALOGUE.items():
            cards = {name: role for role, name in ROLE_NAMES[language].items()}
            roles = "|".join(re.escape(n) for n in sorted(cards, key=len, reverse=True))
            for key, template in templates.items():
                pattern = re.escape(template)
                for field, group in (("role", roles), ("seat", alternatives),
                                     ("target", alternatives)):
                    pattern = pattern.replace(re.escape("{" + field + "}"),
                                              f"(?P<{field}>{group})")
                self._patterns.append((re.compile(pattern), key.removeprefix("seer_"), cards))

    def parse(self, text: str) -> Claim | None:
        """The claim this line renders, or None (free text)."""
        for pattern, kind, cards in self._patterns:
            match = pattern.fullmatch(text.strip())
            if match:
                found = match.groupdict()
                return Claim(kind, seat=self._seat_of.get(found.get("seat", "")),
                             role=cards.get(found.get("role", "")),
                             target=self._seat_of.get(found.get("target", "")))
        return None
