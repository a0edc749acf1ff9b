"""The intent router: one-shot, standing, ambiguous or control, read from plain language.

Pure and model-free (the rule planner's default; the LLM planner follows the same rules). A
message is lower-cased, its URLs are masked as `_url_` and common typos of the words the rules
read are fixed; then the first of these that applies decides:

1. control, read with negated commands dropped ("don't stop watching, just run it now" runs it;
   agent.controls): a question about the watch → describe_watch; pause / resume → pause_watch /
   resume_watch; a new cadence or condition for the watch → edit_watch; stop / cancel watching,
   unsubscribe → stop_watch; run it now, check again, refresh → refresh_watch;
2. a stated cadence ("every 3 hours", "daily", "each morning", "on mondays") → standing;
3. an explicit one-off ("just once", "don't watch it", "one-time") → one_shot;
4. a standing phrase that only makes sense as time passes ("notify me when", "let me know as
   soon as", "over time", "from now on", "whenever") → standing;
5. a one-shot time word ("right now", "currently", "today") → one_shot, even against a watch verb;
6. a watch verb ("watch", "track", "monitor", "keep an eye on", "keep tabs on") → standing;
7. a task verb or a question ("summarize", "compare", "find", "what is") → one_shot;
8. "check X" / "look at X" or a bare URL → ambiguous; anything else → one_shot.

A standing request also carries its `condition` (agent.wants; None: any change, as before) and
the `timezone` its times are stated in (agent.timezones; the cron is written in that zone). A
message that states a condition and asks to be told ("if it drops below 20, let me know") is
standing wherever its words sit.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from datetime import datetime
from typing import Any, Literal

from lookout.agent import cadence, controls, timezones, urls, wants

Intent = Literal["one_shot", "standing", "ambiguous", "control"]
Control = Literal[
    "stop_watch", "refresh_watch", "describe_watch", "pause_watch", "resume_watch", "edit_watch"
]


@dataclasses.dataclass(frozen=True)
class Route:
    """What a message asks for.

    Standing only: `cadence` is a 5-field cron in UTC, `period_min` its shortest gap between two
    runs, `cadence_raised` says the minimum interval lifted it and `notes` how it was read.
    `notify`: the user wants to hear when something happens ("ping me when it drops") rather
    than a report every run. `query`, `place`, `location`: what to search for, a named place
    and the area around it, for map-like requests that carry no URL.
    """

    intent: Intent
    urls: tuple[str, ...] = ()
    cadence: str | None = None
    period_min: int | None = None
    cadence_raised: bool = False
    control: Control | None = None
    notify: bool = False
    query: str | None = None
    place: str | None = None
    location: str | None = None
    notes: tuple[str, ...] = ()
    condition: wants.Condition | None = None
    timezone: str = "UTC"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; `timezone` names the zone `cadence` is written in."""
        data = dataclasses.asdict(self)
        data.update(urls=list(self.urls), notes=list(self.notes))
        return data


@dataclasses.dataclass(frozen=True)
class Amendment:
    """What a short reply changes in a proposed or running watch ("hourly", "below 45")."""

    cadence: cadence.Cadence | None
    timezone: str | None
    condition: wants.Condition | None


def route(text: str, *, now: datetime | None = None, min_interval_minutes: int = 5) -> Route:
    """Route one chat message; `now` anchors weekly and monthly cadences to today's date."""
    found = urls.spans(text)
    links = tuple(dict.fromkeys(url for _, _, url in found))
    masked = _mask(text, found)
    plain = _normalize(masked)
    zone, clocked = timezones.strip(plain)
    stated = cadence.find(clocked, now=now, min_interval=min_interval_minutes)
    condition = wants.read(plain)
    new_time = stated is not None or zone is not None or _CLOCK_ONLY.search(clocked) is not None
    control = _control(controls.unsay(plain), links, new_time, condition)
    if control == "edit_watch":
        if stated is None and (zone is not None or _CLOCK_ONLY.search(clocked)):
            stated = cadence.daily(clocked, now=now, min_interval=min_interval_minutes)
        return _edit(links, stated, zone, condition)
    if control is not None:
        return Route("control", links, control=control)
    intent = _intent(plain, has_url=bool(links), has_cadence=stated is not None)
    if intent != "standing" and _hear_later(plain, condition):
        intent = "standing"
    query, place, location = (None, None, None) if links else _places(masked[:_MAPS_SPAN])
    base = Route(intent, links, query=query, place=place, location=location)
    if intent != "standing":
        return base
    stated = stated or cadence.daily(clocked, now=now, min_interval=min_interval_minutes)
    return dataclasses.replace(
        base,
        cadence=stated.cron,
        period_min=stated.period_min,
        cadence_raised=stated.raised,
        notify=_NOTIFY.search(plain) is not None or condition is not None,
        notes=stated.notes,
        condition=condition,
        timezone=zone or "UTC",
    )


def _hear_later(plain: str, condition: wants.Condition | None) -> bool:
    """ "if it drops below 20, let me know": a condition that can only come true later."""
    if condition is None or _ASKS_TO_HEAR.search(plain) is None:
        return False
    if _LATER_CUE.search(plain) is not None:
        return True
    if condition["kind"] == "in_stock":  # "tell me if it is in stock" asks about now
        return _BACK.search(plain) is not None
    if condition["kind"] == "mentions":  # "… if it mentions X" asks about now; "shows up" later
        return _EVENTUAL.search(plain) is not None
    return bool(condition["kind"] != "any")


def amendment(
    text: str, *, now: datetime | None = None, min_interval_minutes: int = 5
) -> Amendment:
    """The cadence, timezone and condition a reply states (each None when it states none)."""
    plain = _normalize(_mask(text, urls.spans(text)))
    zone, clocked = timezones.strip(plain)
    stated = cadence.find(clocked, now=now, min_interval=min_interval_minutes)
    if stated is None and zone is not None:
        stated = cadence.daily(clocked, now=now, min_interval=min_interval_minutes)
    return Amendment(stated, zone, wants.read(plain))


def _edit(
    links: tuple[str, ...],
    stated: cadence.Cadence | None,
    zone: str | None,
    condition: wants.Condition | None,
) -> Route:
    return Route(
        "control", links, control="edit_watch", condition=condition, timezone=zone or "UTC",
        cadence=stated.cron if stated else None, period_min=stated.period_min if stated else None,
        cadence_raised=stated.raised if stated else False, notes=stated.notes if stated else (),
    )  # fmt: skip


def _mask(text: str, found: list[tuple[int, int, str]]) -> str:
    pieces, last = [], 0
    for start, end, _ in found:
        pieces += [text[last:start], " _url_ "]
        last = end
    return "".join([*pieces, text[last:]])


def _intent(plain: str, *, has_url: bool, has_cadence: bool) -> Intent:
    if has_cadence:
        return "standing"
    for pattern, intent in _LADDER:
        if pattern.search(plain):
            return intent
    return "ambiguous" if has_url else "one_shot"


def _control(
    plain: str, links: tuple[str, ...], new_time: bool, condition: wants.Condition | None
) -> Control | None:
    has_url = bool(links)
    if controls.describes(plain, has_url=has_url):
        return "describe_watch"
    if controls.resumes(plain):
        return "resume_watch"
    if controls.pauses(plain):
        return "pause_watch"
    if controls.edits(plain, has_url=has_url, has_change=new_time or condition is not None):
        return "edit_watch"
    if _ASKS_HOW.search(plain):
        return None
    if condition is not None and _LATER_CUE.search(plain) and _ASKS_TO_HEAR.search(plain):
        return None  # "email me when it doesn't mention the strike anymore": a new request
    if _STOP.search(plain):
        return "stop_watch"
    if _REFRESH.search(plain):
        return "refresh_watch"
    return None


# --- the phrase families ---------------------------------------------------------------------


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{alt})" for alt in alternatives))


_WATCHED = r"(?:watch|track|monitor|check|notif|alert|ping|e?-?mail|updat|follow|send|remind)\w*"
_ASKS_HOW = _rx(r"^\W*(?:how|why|what|where)\b")
_CLOCK_ONLY = _rx(r"\b\d{1,2}(?::[0-5]\d)?\s*[ap]\.?m\b", r"\b(?:at|to)\s+\d{1,2}:[0-5]\d\b")
_EVENTUAL = _rx(
    r"\b(?:shows?\s+up|appears?|pops?\s+up|comes?\s+up|(?:is|are|gets?)\s+(?:posted|announced"
    r"|mentioned|listed|added|published))\b"
)
_BACK = _rx(r"\b(?:back|again|restock\w*|becomes?|comes?)\b")
_LATER_CUE = _rx(r"\b(?:when(?:ever)?|as\s+soon\s+as|once|the\s+(?:moment|minute|day)|ever)\b")
_ASKS_TO_HEAR = _rx(
    r"\b(?:notify|alert|ping|warn|buzz|e?-?mail|text|message|tell|inform|update)\s+(?:me|us)\b"
    r"|\blet\s+(?:me|us)\s+know\b|\b(?:get|be)\s+(?:notified|alerted|pinged|told)\b"
    r"|\bgive\s+(?:me|us)\s+a\s+(?:heads[- ]up|shout|ping)\b|\bi\s+want\s+to\s+(?:know|hear)\b"
    r"|\bi(?:'d|\s+would)\s+(?:like|love)\s+to\s+(?:hear|know|be\s+told)\b"
    r"|\b(?:want|need|like|get)\s+(?:an?\s+)?(?:alert|notification|ping|heads[- ]up|e?-?mail"
    r"|message|text)\b"
    r"|\bsend\s+(?:me|us)\s+(?:an?\s+)?(?:alert|notification|message|e?-?mail|text|ping|note)\b",
)
_STOP = _rx(
    r"\bun-?(?:subscribe|watch|follow|track|monitor)\b",
    r"\b(?:stop|cancel|pause|halt|end|quit|disable|kill|remove|delete|turn\s+off|switch\s+off"
    r"|mute|suspend|drop)\s+(?:the\s+|this\s+|that\s+|my\s+|these\s+|those\s+|your\s+"
    r"|all\s+(?:the\s+|my\s+|of\s+(?:the|these|them)\s+)?)?"
    rf"(?:{_WATCHED}|schedule|automation|subscription|it|this|that|them|everything|now)\b",
    r"(?:^|[.!?;,]\s*)(?:(?:ok(?:ay)?|please|pls|plz|hey|just|alright|thanks|thank you|now)\W+)*"
    r"(?:stop|cancel|pause|enough|halt)\b(?!\s+(?:at|by|in|near|for|from)\b)",
    rf"\b{_WATCHED}\b[^.?!]{{0,120}}\b(?:any\s*more|any\s+longer)\b",
    r"\b(?:any\s*more|any\s+longer|no\s+longer)\b[^.?!]{0,120}\b(?:need|want|care|interested"
    r"|relevant)\b",
    r"\bno\s+(?:more|longer)\s+(?:need\s+(?:for|of)\s+)?(?:updates|alerts|notifications|pings"
    r"|emails|watching|tracking|checks|monitoring|reminders)\b",
)
_REFRESH = _rx(
    r"\b(?:re-?run|re-?check|re-?fresh|re-?scan|re-?poll)\b(?!\s+(?:rate|token|my\s+memory))",
    r"\b(?:run|check|look|scan|poll|do|fetch|update|trigger)\s+(?:(?:it|this|that|the\s+(?:watch"
    r"|check|job|scan|search|page|site|automation))\s+)?(?:again\b|(?:right\s+)?now\s*(?:[.!?,;]|"
    r"please|pls|$))",
    r"\b(?:run|check|look\s+at|scan|fetch|load)\s+_url_\s+again\b",
    r"\b(?:trigger|force|kick\s+off)\s+(?:a|the|an)\s+(?:manual\s+)?(?:run|check|refresh|update"
    r"|scan)\b",
    r"^\W*(?:again|once\s+more|one\s+more\s+time|run\s+it|update)\W*$",
)
_ONCE = _rx(
    r"\b(?:just|only)\s+(?:this\s+)?once\b|\bthis\s+once\b|\bone[- ]?(?:time|off|shot)\b"
    r"(?!\s+(?:fee|payment|purchase|code|password|setup))",
    r"\bonce\s*(?:[.!?,;]|$|and\b|now\b|for\s+now|please|pls|is\s+(?:enough|fine|ok))",
    r"\bjust\s+(?:tell|give|show|get|check|look|the\s+current|(?:right\s+)?now)\b",
    r"\b(?:do\s*n[o']?t|dont|no\s+need\s+to|not\s+(?:going\s+)?to)\s+(?:need\s+to\s+)?"
    r"(?:keep\s+)?(?:watch|track|monitor|follow|subscribe|notify|alert|ping|keep\s+(?:an\s+eye"
    r"|tabs|checking|watching))",
    r"\bno\s+(?:need\s+(?:for|to)\s+(?:a\s+)?)?(?:watch(?:ing)?|tracking|monitoring|alerts"
    r"|notifications|follow-?ups?|subscription)\b",
    r"\bnot?\s+(?:ongoing|recurring|repeating|regularly|continuous)\b|\bone[- ]and[- ]done\b"
    r"|\bwithout\s+(?:watching|tracking|monitoring|a\s+watch)\b|\bsnapshot\b",
)
_EVENT = (
    r"(?:chang|drop|fall|fell|goes|go\s+(?:up|down|live|on\s+sale)|rise|rose|hit|reach|appear"
    r"|become|gets?\b|(?:is|are|comes?)\s+back|back\s+in\s+stock|in\s+stock|restock|sell|sold"
    r"|launch|releas|publish|post|announc|updat|mov|increas|decreas|cross|exceed|below|above"
    r"|under\b|cheaper|lower|higher|available|new\b|anything|something|differ|break|down\b)"
)
_NOTIFY_VERB = (
    r"(?:let\s+(?:me|us)\s+know|tell\s+(?:me|us)|inform\s+(?:me|us)|e?-?mail\s+(?:me|us)"
    r"|text\s+(?:me|us)|message\s+(?:me|us)|dm\s+(?:me|us)|update\s+(?:me|us)|send\s+(?:me|us)"
    r"(?:\s+\w+){0,2}|give\s+(?:me|us)\s+a\s+(?:heads[- ]up|shout|ping|buzz|call)"
    r"|(?:need|want|'d\s+like|would\s+like)\s+to\s+(?:know|hear|be\s+told))"
)
_WHEN = (
    r"(?:when(?:ever)?|as\s+soon\s+as|once|the\s+(?:moment|minute|second|instant|day)|if"
    r"|in\s+case|should)"
)
_LATER = _rx(
    r"\b(?:notify|alert|ping|warn|buzz)\s+(?:me|us|the\s+team|my\s+team)\b",
    r"\b(?:give|send)\s+(?:me|us)\s+a\s+(?:heads[- ]up|shout|ping|buzz)\b",
    r"\b(?:get|be)\s+(?:notified|alerted|pinged|informed|warned|an?\s+(?:alert|notification"
    r"|ping|heads[- ]up))\b",
    rf"\b{_NOTIFY_VERB}\b[^.?!]{{0,60}}?\b{_WHEN}\b[^.?!]{{0,80}}?\b{_EVENT}",
    r"\blet\s+(?:me|us)\s+know\s+(?:when(?:ever)?|as\s+soon\s+as|once|the\s+moment)\b",
    r"\bkeep\s+(?:me|us)\s+(?:posted|updated|informed|in\s+the\s+loop|up\s+to\s+date)\b",
    r"\b(?:over|across)\s+time\b|\bgoing\s+forward\b|\bfrom\s+(?:now|here|today)\s+on\b"
    r"|\bin\s+the\s+future\b|\bwhenever\b|\b(?:every|each)\s+time\b|\buntil\s+(?:further\s+notice"
    r"|i\s+say|it|they|there)\b",
    r"\b(?:continuous(?:ly)?|constantly|regularly|periodically|routinely|repeatedly|ongoing"
    r"|perpetually|24/7)\b|\b(?:a)?round\s+the\s+clock\b|\bfrom\s+time\s+to\s+time\b"
    r"|\bnow\s+and\s+(?:then|again)\b|\bevery\s+so\s+often\b|\bonce\s+in\s+a\s+while\b",
    r"\bon\s+an?\s+(?:ongoing|regular|recurring|continuous)\s+basis\b|\bsubscribe\b",
    r"\b(?:set\s*up|create|add|make|start|schedule)\s+(?:an?\s+|the\s+)?(?:watch|alert|monitor"
    r"|tracker|notification|automation|recurring|schedule)\w*\b",
    r"\b(?:start|begin|resume|continue)\s+(?:watching|tracking|monitoring|checking)\b",
    r"\bstay\s+on\s+top\s+of\b|\bas\s+(?:it|they|things)\s+(?:changes?|happens?|updates?)\b",
)
_NOW = _rx(
    r"\bright\s+now\b|\b(?<!from )now\b(?!\s+(?:on|and\s+(?:then|again)))|\bcurrent(?:ly)?\b",
    r"\bat\s+(?:the\s+moment|present)\b|\b(?<!starting )(?<!from )today\b|\btonight\b",
    r"\bthis\s+(?:morning|afternoon|evening)\b|\bimmediately\b|\bas\s+of\s+(?:now|today)\b",
)
_NOUN_BEFORE = "the a an my your our his her their this that which what smart apple best new on off"
_NOUN_BEFORE += " fast race sound baby gaming fitness cheap i used good"
_WATCH = _rx(
    "".join(rf"(?<!\b{word} )" for word in _NOUN_BEFORE.split())
    + r"\b(?:watch|monitor|track)(?:ing)?\b(?!\s*(?:record|list|number|code|id\b|face|band|strap"
    r"|repair|battery|brand|store|shop|party|pad|suit|later|movies?|films?|videos?|tv\b|shows?"
    r"|anime|netflix|youtube|(?:the|a)\s+(?:game|match|movie|film|show|video)|arm\b|stand|size"
    r"|resolution|deals?|cable|settings|under))",
    r"\bkeep(?:ing)?\s+(?:a\s+(?:close\s+)?|an\s+|close\s+)?(?:eyes?|tabs|track|watch|an\s+ear)\b",
    r"\bkeep(?:ing)?\s+(?:checking|watching|tracking|monitoring|looking|refreshing|polling)\b",
    r"\beyes?\s+on\b|\bfollow\b[^.?!]{0,80}\b(?:for\s+(?:changes|updates|news)|closely)\b",
    r"\blook\s*out\s+for\b|\bon\s+the\s+lookout\b|\bcheck\s+back\b|\bobserve\b",
    r"\bfor\s+(?:any\s+)?(?:changes|updates|new\s+\w+)\b|\blet\s+(?:me|us)\s+know\s+if\b",
)
_TASK = _rx(
    r"^\W*(?:(?:hey|hi|ok|so|and|also|please|quick\s+question)\W+)*(?:what(?!\s+about)|what's|whats"
    r"|which|who|whose|where|why|how|when\s+(?:is|are|does|do|did|was|will)|is|are|was|were"
    r"|(?:do|does|did|has|have)\s+(?:you|they|there|we|i|it|he|she|the|this|that|_url_))\b",
    r"\b(?:summari[sz]e|summary|sum\s+up|tl;?dr|recap|rundown|overview|breakdown|gist|compare"
    r"|comparison|contrast|diff|versus|vs\.?|find|search|look\s+up|lookup|look\s+for|google"
    r"|research|pull|get|grab|fetch|scrape"
    r"|extract|download|export|copy|collect|gather|list|enumerate|show|give\s+me|tell\s+me|read"
    r"|scan|audit|validate|verify|proofread|test"
    r"|quote|translate|explain|describe|outline|analy[sz]e|review|evaluate|count|map|crawl"
    r"|index|discover|what's|what\s+(?:is|are)|price\s+of|cost\s+of|how\s+(?:much|many)"
    r"|directions|near(?:by|est)?|closest|reviews?|ratings?|opening\s+hours|headlines|convert"
    r"|calculate|define|meaning)\b",
    r"\b(?:check|see|find\s+out|know|learn|understand|figure\s+out)\s+(?:if|whether|what|how|when"
    r"|who|which|that)\b",
)
_LOOK = _rx(
    r"\b(?:check(?:\s+out)?|look\s+(?:at|into|over)|(?:have|take)\s+a\s+(?:quick\s+)?(?:look|peek"
    r"|glance)|peek|glance|visit|open|go\s+to|browse|inspect|view|see|thoughts?\s+on"
    r"|what\s+about)\b"
)
_LADDER: tuple[tuple[re.Pattern[str], Intent], ...] = (
    (_ONCE, "one_shot"),
    (_LATER, "standing"),
    (_NOW, "one_shot"),
    (_WATCH, "standing"),
    (_TASK, "one_shot"),
    (_LOOK, "ambiguous"),
)
_NOTIFY = _rx(
    r"\b(?:notify|alert|ping|warn|buzz)\s+(?:me|us)\b|\b(?:notified|alerted|pinged|warned)\b",
    rf"\b{_NOTIFY_VERB}\b",
    r"\b(?:alert|notification|heads[- ]up)s?\b",
    r"\bkeep\s+(?:me|us)\s+(?:posted|updated|informed|in\s+the\s+loop|up\s+to\s+date)\b",
)


# --- normalization ---------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words the rules read, and the typos of them worth fixing: a word of five letters or more one
# edit (Damerau) away from one of these is read as it, unless it is itself an English word one
# edit away (from /usr/share/dict/words): "dairy" is not "daily", "match" is not "watch".
_VOCABULARY = _words("""
every daily hourly weekly monthly nightly yearly minute minutes hours weeks months morning
mornings evening evenings night nights afternoon weekday weekdays weekend weekends monday tuesday
wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays
sundays watch watching monitor monitoring track tracking notify notified alert alerts changes
summarize summarise compare unsubscribe cancel refresh twice right again remind updates
""")
_NEAR_MISSES = _words("""
afternoons albert aleut alpert aright avert averts avery batch batching bight bights bright
cancels cancer catch catching chancel chances change changed charges compared compares corning
crack cracking dairy daisy dally dearly doily dourly drily early eight eights emery evert fight
fights fours frack fracking fright gaily geeks hatch hatching horus knight knightly knights latch
latching leeks light lightly lights match matching meekly might minuet minuets minuses minuted
minuter minutest moaning monitors month mooning moths mourning mouths nearly nighty notifies
patch patching pearly peeks pours racking rebind reeks remand reminds revery rewind rightly
rights seeks sight sights sourly sours summaries summarized summarizes sundae sundaes sundas
sundry swatch tacking tight tightly tights tours trace traci tracing tracks tract tracy trice
trick tricking truck trucking twine unsubscribed unsubscribes update updated updater weakly
weeds weeps wight wights witch witching wrack wright yours
""")
_KNOWN = _VOCABULARY | _NEAR_MISSES
_SHORT_TYPOS = {
    "evry": "every", "evey": "every", "eveyr": "every", "ery": "every", "evrey": "every",
    "dayly": "daily", "hrly": "hourly", "wkly": "weekly", "nite": "night", "nitely": "nightly",
    "wach": "watch", "wtch": "watch", "trak": "track", "chek": "check", "chk": "check",
    "pls": "please", "plz": "please", "lemme": "let me", "u": "you", "ur": "your",
    "whats": "what's", "dont": "don't", "e-mail": "email", "mins": "minutes", "hrs": "hours",
}  # fmt: skip
_SPACES = re.compile(r"\s+")
# Real words typed for a time unit; read as the unit only right after a frequency word.
_SOUNDALIKES = {"weak": "week", "weaks": "weeks", "our": "hour", "ours": "hours", "dya": "day"}
_SOUNDALIKE = re.compile(r"\b(every|each|per|a|an|once a|twice a|\d+)\s+(weaks?|ours?|dya)\b")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_EVERYDAY = re.compile(
    r"\beveryday\b(?=\s*(?:$|[.,;!?]|at\b|and\b|please\b|for\b|from\b|to\b|in\b|on\b|_url_"
    r"|until\b|starting\b|around\b|by\b|\d))"
)


def _normalize(text: str) -> str:
    text = _SPACES.sub(" ", text.lower().translate(_QUOTES))
    text = re.sub(r"[a-z][a-z'-]*", lambda m: _fix_word(m.group()), text)
    text = _SOUNDALIKE.sub(lambda m: f"{m.group(1)} {_SOUNDALIKES[m.group(2)]}", text)
    return _EVERYDAY.sub("every day", text)


@functools.lru_cache(maxsize=8192)
def _fix_word(word: str) -> str:
    if word in _SHORT_TYPOS:
        return _SHORT_TYPOS[word]
    if not 5 <= len(word) <= 12 or not word.isalpha() or word in _KNOWN:
        return word
    keys = (word, *(word[:i] + word[i + 1 :] for i in range(len(word))))
    candidates = {known for key in keys for known in _BY_DELETION.get(key, ())}
    matches = [known for known in candidates if _one_edit(word, known)]
    return matches[0] if len(matches) == 1 else word


def _one_edit(a: str, b: str) -> bool:
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
        return len(diff) == 1 or (swapped and a[diff[1]] == b[diff[0]])
    short, long = sorted((a, b), key=len)
    return len(long) - len(short) == 1 and any(
        long[:i] + long[i + 1 :] == short for i in range(len(long))
    )


def _deletion_index() -> dict[str, tuple[str, ...]]:
    index: dict[str, set[str]] = {}
    for known in _VOCABULARY:
        for key in {known, *(known[:i] + known[i + 1 :] for i in range(len(known)))}:
            index.setdefault(key, set()).add(known)
    return {key: tuple(sorted(words)) for key, words in index.items()}


_BY_DELETION = _deletion_index()


# --- maps: what, and where ------------------------------------------------------------------

_SEARCH_LEAD = re.compile(
    r"^\W*(?:(?:please|pls|can\s+you|could\s+you|hey|hi)\W+)*(?:find|search\s+(?:for\s+)?"
    r"|look\s+(?:for|up)|show\s+(?:me\s+)?|list|where\s+(?:is|are|can\s+i\s+find)|get\s+me"
    r"|give\s+me|any|google|i\s+need|i'm\s+looking\s+for)?\s*"
    r"(?:(?:the|a|an|some|all|all\s+the|nearest|closest)\s+)*",
    re.IGNORECASE,
)
_AREA = re.compile(
    r"\s+(?:near(?:by)?|around|close\s+to|next\s+to|in\s+the\s+vicinity\s+of|within\s+\d+\s*"
    r"(?:km|m|mi|miles?|meters?|metres?|minutes?)(?:\s+walk)?\s+of)\s+",
    re.IGNORECASE,
)
_POI_IN = re.compile(
    r"\b(?:restaurants?|caf[eé]s?|coffee|bars?|pubs?|hotels?|hostels?|pharmac(?:y|ies)|shops?"
    r"|stores?|supermarkets?|baker(?:y|ies)|museums?|parks?|gyms?|dentists?|doctors?"
    r"|hospitals?|atms?|banks?|gas\s+stations?|petrol\s+stations?|parking|schools?|libraries"
    r"|library|cinemas?|theaters?|theatres?|clubs?|salons?|barbers?|vets?|places\s+to\s+\w+)"
    r"\s+(?:in|at)\s+",
    re.IGNORECASE,
)
_PLACE = re.compile(
    r"\b(?:reviews?|ratings?|opening\s+hours|hours|phone\s+number|address|directions)\s+"
    r"(?:of|for|to|at)\s+(?P<place>.+?)(?:\s+(?:in|near|at)\s+(?P<where>[^?!]+?))?\s*[?.!]*$"
    r"|\bis\s+(?P<open>[^.?!]{1,80}?)\s+open\b",
    re.IGNORECASE,
)
_TAIL = re.compile(
    r"\s*,?\s*\b(?:every|each|daily|hourly|weekly|monthly|nightly|twice|once|and\s+(?:let|tell"
    r"|notify|alert|ping|keep|show|give|get|list|read|send|find|see|check|what|how|their|its)"
    r"|right\s+now|now|today|tonight|please|pls|for\s+me)\b.*$"
    r"|\s*[?.!]+\s*$",
    re.IGNORECASE,
)


# Maps requests are one short sentence; reading further only costs time.
_MAPS_SPAN = 300


# "near the Eiffel Tower under 150 euros": what follows the place narrows the search, not where.
_QUALIFIER = re.compile(
    r"\s+(?:under|below|cheaper\s+than|less\s+than|for\s+(?:less|under|below)|with(?:out)?"
    r"|that|which|open|where)\b.*$",
    re.IGNORECASE,
)


def _places(text: str) -> tuple[str | None, str | None, str | None]:
    """(query, place, location) of a maps request in `text` (URLs masked), or Nones."""
    place = _PLACE.search(text)
    if place is not None:
        named = place.group("place") or place.group("open")
        return None, _tidy(named), _where(place.group("where"))
    for splitter in (_AREA, _POI_IN):
        parts = splitter.split(text, maxsplit=1)
        if len(parts) == 2:
            what = _SEARCH_LEAD.sub("", parts[0]) + (_poi(text, splitter) or "")
            return _tidy(what), None, _where(parts[1])
    return None, None, None


def _poi(text: str, splitter: re.Pattern[str]) -> str | None:
    match = splitter.search(text)
    return match.group().split()[0] if splitter is _POI_IN and match else None


def _where(value: str | None) -> str | None:
    return _tidy(_QUALIFIER.sub("", value)) if value else None


def _tidy(value: str | None) -> str | None:
    if value is None:
        return None
    value = _TAIL.sub("", value).strip(" ,;:\"'")
    return None if value.lower() in ("", "me", "here", "us", "my location") else value


def names_zone(text: str) -> bool:
    """Whether `text` names a time zone ("at 9am Paris time", "in UTC")."""
    zone, _ = timezones.strip(_normalize(_mask(text, urls.spans(text))))
    return zone is not None
