"""Controls of a chat's watch beyond stop and run-now: describe, pause, resume, edit (pure).

Read on the router's normalized text (URLs masked as `_url_`), before stop / run-now:
- a question about the watch ("what are you watching?", "how do I stop watching?", "when is the
  next check?") is `describe_watch`: it never starts, replaces or stops one;
- "pause", "hold off", "stop … for a week / for now" is `pause_watch`; "resume", "unpause",
  "start watching again" is `resume_watch`;
- a new cadence or condition said of the existing watch ("check it hourly instead", "from now on
  run the check twice a day", "only when it's below 40") is `edit_watch`.
`unsay` drops the negated commands ("don't stop watching, just run it now" → "just run it now").
"""

from __future__ import annotations

import re

_WATCH_WORDS = (
    r"(?:(?:the|this|that|my|your|our|its|chat's)\s+(?:current\s+|active\s+)?(?:watch(?:es)?"
    r"|checks?|alerts?|schedule|automation|subscription|condition|threshold|cadence|notifications?"
    r"|tracker)(?!\s+(?:band|strap|face|brand|store|shop|list|number|of\s+the))"
    r"|(?:watch|track|monitor|check)(?:ing|ed)(?!\s+(?:number|code|id|link|info|account))"
    r"|alerts|notif(?:y|ied|ications?)|keeping\s+an\s+eye|keeping\s+tabs|looking\s+out"
    r"|pinging|how\s+often|next\s+(?:check|run)|last\s+(?:check|run|result|value|reading))"
)
_QUESTION = re.compile(
    r"^\W*(?:(?:hey|hi|ok|so|and|also|quick\s+question|remind\s+me|tell\s+me|um|uh)\W+)*"
    r"(?:what(?:'s|\s+is|\s+are|\s+do|\s+does|\s+did|\s+will|\s+exactly)?|which|when(?:'s)?"
    r"|why(?:'s)?|how(?:'s)?|is|are|do|does|did|will|have|has|am|can\s+you\s+(?:tell"
    r"|remind|show)|could\s+you\s+(?:tell|remind|show))\b"
)
_ABOUT_WATCH = re.compile(
    rf"\b{_WATCH_WORDS}\b|\bwhat\s+time\s+do\s+you\b|\bstill\s+(?:running|active|going)\b"
    r"|\bhaven'?t\s+(?:i\s+)?heard\b|\bno\s+(?:alerts?|notifications?|news)\s+yet\b"
    r"|\b(?:will|did|do)\s+you\s+(?:alert"
    r"|notify|ping|tell|email|message|warn)\s+me\b|\b(?:what|which)\s+(?:threshold|condition"
    r"|cadence|schedule|alerts?|watch(?:es)?)\b"
)
_WATCHED = re.compile(
    r"\b(?:being\s+)?(?:watched|tracked|monitored|checked)\b|\byou(?:'re|\s+are)?\s+(?:still\s+)?"
    r"(?:watching|tracking|monitoring|checking)\b|\b(?:the|this|my|your)\s+watch\b"
)
_DESCRIBE_PLAIN = re.compile(
    r"\b(?:describe|show|explain|summari[sz]e|list|recap|remind\s+me\s+(?:of|about)|tell\s+me"
    r"\s+about|give\s+me)\s+(?:me\s+)?(?:the|this|my|your|all\s+(?:the\s+|my\s+)?)?\s*(?:current\s+)?"
    r"(?:watch(?:es)?|alerts?|schedule|automation|settings|conditions?|tracking|monitoring"
    r"|subscriptions?)\b(?!\s+(?:_url_|every|each|daily|hourly|weekly))"
    r"|\b(?:watch|alert|monitor|tracking)\s+(?:status|settings|details|info)\b"
    r"|^\W*(?:status|details)\W*$"
)
_NEW_REQUEST = re.compile(
    r"\b(?:can|could|would)\s+you\s+(?:please\s+)?(?:watch|track|monitor|keep|notify|alert"
    r"|tell\s+me\s+when|let\s+me\s+know)|\bwhat\s+if\s+you\b|\bkeep\s+(?:checking|watching"
    r"|tracking|monitoring|an\s+eye)\b"
)
_PAUSE = re.compile(
    r"\b(?:pause|paus(?:ing|ed)|suspend|put\s+(?:it|this|the\s+\w+)\s+on\s+hold|on\s+hold|hold\s+off"
    r"|take\s+a\s+break|snooze|mute\s+(?:it|this|the\s+\w+)\s+for)\b"
    r"|\b(?:stop|halt|skip)\b[^.?!]{0,40}\bfor\s+(?:now|a\s+(?:while|bit|few\s+\w+|week|day|month)"
    r"|the\s+(?:week|weekend|holidays?|time\s+being)|\d+\s+\w+|(?:two|three|a\s+couple\s+of)\s+\w+)\b"
    r"|\b(?:stop|halt)\b[^.?!]{0,40}\buntil\b"
)
_RESUME = re.compile(
    r"\b(?:resume|un-?pause|unpaus\w*|re-?enable|reactivate|re-?start|unmute|unsnooze)\b"
    r"|\b(?:start|begin|continue|keep\s+on)\s+(?:(?:watching|tracking|monitoring|checking)"
    r"(?:\s+(?:it|this|them))?|the\s+checks|the\s+watch|it|them)\s+(?:again|back\s+up)\b"
    r"|\b(?:turn|switch|put)\s+(?:it|this|the\s+\w+)\s+back\s+on\b|\bback\s+on\b"
    r"|\bpick\s+(?:it|this)\s+back\s+up\b|\b(?:start|continue)\s+again\b"
    r"|\bcarry\s+on\s+(?:watching|checking|tracking|monitoring)\b"
)
_EDIT_CUE = re.compile(
    r"\binstead\b|\brather\s+than\b|\bfrom\s+now\s+on\b|\bgoing\s+forward\b"
    r"|\b(?:change|switch|move|set|make|update|edit|adjust|bump|lower|raise|reduce|increase"
    r"|modify|reschedule)\s+(?:it|this|that|the\s+\w+|my\s+\w+|your\s+\w+|to)\b"
    r"|\b(?:only|just)\s+(?:notify|alert|ping|tell|let|email|message|when|if|once)\b"
    r"|\b(?:check|run|look)\s+(?:it|this|that|the\s+(?:page|site|check|watch))\b"
    r"|\b(?:the|this|my|your)\s+(?:check|watch|alert|schedule)s?\b"
)
_NEGATED = re.compile(
    r"\b(?:do\s*n[o']?t|dont|never|no\s+need\s+to|not)\s+(?:(?:want\s+(?:you\s+)?to|need\s+(?:you\s+)?"
    r"to|you|ever|please|just)\s+)*(?:stop|cancel|pause|end|delete|remove|kill|drop|turn\s+off"
    r"|switch\s+off|disable|unsubscribe|halt|resume|restart|change|edit|run|refresh)\b[^,.;!?]*?"
    r"(?=,|\.|;|!|\?|\bjust\b|\bbut\b|\binstead\b|\bonly\b|$)"
)


def unsay(plain: str) -> str:
    """`plain` without the commands it negates."""
    return _NEGATED.sub(" ", plain) if "n" in plain else plain


def describes(plain: str, *, has_url: bool) -> bool:
    """A question (or a request to be told) about the chat's watch."""
    if _NEW_REQUEST.search(plain):
        return False
    if _DESCRIBE_PLAIN.search(plain):
        return True
    if not _QUESTION.search(plain) or not _ABOUT_WATCH.search(plain):
        return False
    # "what is the weekly schedule on _url_?" asks about the page, not the watch.
    return not has_url or _WATCHED.search(plain) is not None


def pauses(plain: str) -> bool:
    return _PAUSE.search(plain) is not None


def resumes(plain: str) -> bool:
    return _RESUME.search(plain) is not None


def edits(plain: str, *, has_url: bool, has_change: bool) -> bool:
    """A new cadence or condition (`has_change`) said of the watch this chat has."""
    return has_change and not has_url and _EDIT_CUE.search(plain) is not None
