"""More offline breakdown rules (issue 31, item 3: "the offline detector covering every type it can decide
from text"): the types of seed 002's taxonomy (Section 3.3) that breakdown_rules did not produce and that
the dialogue's words alone decide. `findings` gives, for one assistant turn, {type title: reason}.

Each rule looks for a sign in the words, not for meaning, and rather misses than raises a false alarm:
- Grammatical error: a word doubled ("the the"), or a statement that stops on an article or conjunction;
- Ignore greeting: the user's turn is a greeting or a goodbye and the reply returns neither;
- Ignore proposal: the user proposes ("How about ...", "Let's ...") and the reply neither takes it up,
  accepts nor declines;
- Topic transition error: the reply is about nothing said before (none of the user's last words, almost
  none of the dialogue's) while the user had made a statement of its own;
- Lack of information: the reply promises what it does not give (ends on "here are the options:", points
  to a link or to something below that is not there);
- Lack of sociality: rude words ("that's a stupid question", "figure it out yourself");
- Task performance failure (task-oriented): the bot says its own task failed ("something went wrong",
  "I was unable to process");
- Redundancy (task-oriented): the bot asks again a question the user already answered, or asks for "your
  X" when the user already said "my X is ...";
- Lack of brevity (task-oriented): a reply over `LONG_REPLY_WORDS` words;
- Lack of clarity (task-oriented): a template or raw data left in the reply ("{name}", "null", a JSON
  object, stored field names such as "warranty_code:"), or a sentence over `LONG_SENTENCE_WORDS` words;
- Failure to communicate capabilities (task-oriented): the user asks what the bot can do and the reply
  says nothing of what it can or cannot do;
- Failure to resolve out-of-domain request (task-oriented): an out-of-scope request declined with no way
  forward (no other place to ask, nothing the bot can do instead); `out_of_domain` is decided by
  breakdown_rules and passed in.

Four types need knowledge of the world or of what the bot meant, which words alone do not give:
`UNDECIDABLE` says which and why.
"""

from __future__ import annotations

import re

from evalcore.documents.retrieval import tokenize
from evalcore.documents.sentences import split_sentences
from evalcore.generators.simulation.records import DialogueTurn
from evalcore.models import TurnRole

UNDECIDABLE = {
    "Semantic error": "whether words combine into a meaning needs a reader (a model), not word matching",
    "Wrong information": "whether a statement is false needs the facts of the world or of the documents",
    "Unclear intention": "why the bot said something needs its intent, which the words do not show",
    "Lack of common sense": "what almost everyone holds true is world knowledge the rules do not have",
}
# The published ChatChecker run's longest reply is 120 words and none of its replies is labelled wordy;
# a reply half as long again is needlessly long for a chat turn.
LONG_REPLY_WORDS = 180
# A sentence longer than this is hard to follow in a chat (plain-language guides put the limit near 25-30).
LONG_SENTENCE_WORDS = 50
# Share of a proposal's content words a reply must take up to take it up (as breakdown_rules.TAKEN_UP).
TAKEN_UP = 1 / 3
# A reply about nothing said before: at most this share of its content words were used before.
NEW_TOPIC_SHARE = 0.1
MIN_TOPIC_WORDS = 5
# A greeting that opens a longer turn ("Hi there! I want to ...") is answered by taking up the rest; one
# that is (nearly) the whole turn ("Hello, how are you?") asks to be returned.
GREETING_WORDS = 6

_DOUBLED = re.compile(r"\b(the|a|an|to|of|and|is|are|you|your|in|for|with|on|it)\s+\1\b", re.IGNORECASE)
_DANGLING = frozenset(["the", "a", "an", "and", "or", "but", "of", "my", "your", "our", "their", "its"])
_GREETING = re.compile(r"^\W*(?:hi|hello|hey|good (?:morning|afternoon|evening)|greetings)\b", re.I)
_FAREWELL = re.compile(r"\b(?:bye|goodbye|good night|see you|farewell)\b", re.IGNORECASE)
_GREETS_BACK = re.compile(
    r"\b(?:hi|hello|hey|welcome|good (?:morning|afternoon|evening|day)|nice to (?:meet|see|hear)"
    r"|glad|pleasure|bye|goodbye|see you|take care|have a (?:great|good|nice|wonderful)|thanks?|thank you"
    r"|you'?re welcome)\b",
    re.IGNORECASE,
)
_PROPOSAL = re.compile(
    r"^(?!\W*(?:yes|yeah|sure|ok(?:ay)?|alright)\b).*\b(?:how about|what about|what if we|let'?s|shall we"
    r"|why don'?t we|we could|i suggest|i propose|maybe we (?:can|could))\b",
    re.IGNORECASE,
)
_ANSWERS_PROPOSAL = re.compile(
    r"\b(?:yes|no|sure|sounds|good idea|great idea|ok(?:ay)?|agreed?|that works|alright|absolutely"
    r"|of course|perfect|let'?s|unfortunately|instead|rather|not possible|can'?t|cannot|happy to)\b",
    re.IGNORECASE,
)
_RUDE = re.compile(
    r"\b(?:stupid|idiot\w*|dumb|moron\w*|shut up|whatever|duh|ugh|pathetic|ridiculous|useless"
    r"|i don'?t care|not my problem|figure it out yourself|read the manual|are you (?:blind|deaf|serious)"
    r"|how many times|as i already (?:told|said)|obviously you)\b",
    re.IGNORECASE,
)
_PROMISE_END = re.compile(r"(?::|\b(?:the following|as follows|below)\W*)\s*$", re.IGNORECASE)
_LINK = re.compile(r"\b(?:this|the following|the|our) link\b|\bclick here\b", re.IGNORECASE)
_URL = re.compile(r"https?://|www\.|\[[^\]]+\]\(", re.IGNORECASE)
_FAILED = re.compile(
    r"\b(?:something went wrong|an? (?:internal |unexpected |technical )?error (?:occurred|has occurred)"
    r"|(?:unable to|failed to|(?:could|can)(?:n'?t| not)) (?:process|complete|save|retrieve|access|load"
    r"|connect|submit|update|place|finish)|try again later|technical (?:issue|problem|difficult)\w*"
    r"|(?:system|service|server) is (?:down|unavailable|not available))",
    re.IGNORECASE,
)
_TEMPLATE = re.compile(
    r"\{\{?\s*\w+\s*\}\}?|<[A-Z_]{3,}>|\[(?:insert|name|placeholder)[^\]]*\]|\b(?:null|undefined|NaN|None)\b"
    r"|\{\s*\"\w+\"\s*:",
)
# A record read out as it is stored ("warranty_code: WR-EXR; applies_to: ..."): field names a customer
# never wrote, two or more of them.
_RAW_FIELD = re.compile(r"\b[a-z]+(?:_[a-z]+)+\s*:")
_CAPABILITY_QUESTION = re.compile(
    r"\b(?:what (?:else )?can you (?:do|help(?: me)? with)|what are you able to|how can you help"
    r"|what do you (?:do|help with)|what kinds? of (?:things|questions|requests)"
    r"|what are your (?:capabilities|features|limits|limitations)|are you able to help)\b",
    re.IGNORECASE,
)
_STATES_CAPABILITY = re.compile(
    r"\b(?:i can|i'?m able|i am able|i help|i'?m here to|i am here to|we can|you can ask|i'?m not able"
    r"|i cannot|i can'?t|i (?:do not|don'?t) (?:handle|support|do)|able to|capable)\b",
    re.IGNORECASE,
)
_WAY_FORWARD = re.compile(
    r"\b(?:try|contact|visit|recommend|suggest|instead|you (?:could|can|might|may)|elsewhere|search"
    r"|check with|website|i can help|i can assist|what i can|happy to help with|other)\b",
    re.IGNORECASE,
)
_MY_DETAIL = re.compile(r"\bmy ((?:[a-z]+ ){0,2}[a-z]+) (?:is|was|are)\b", re.IGNORECASE)
_YOUR_DETAIL = re.compile(r"\byour ((?:[a-z]+ ){0,2}[a-z]+)\b", re.IGNORECASE)


def _words(text: str) -> set[str]:
    return set(tokenize(text.lower()))


def _last_user(turns: list[DialogueTurn], index: int) -> DialogueTurn | None:
    return turns[index - 1] if index and turns[index - 1].role == TurnRole.user else None


def grammatical_error(reply: str) -> str | None:
    """A doubled word, or a statement stopping on an article or conjunction (cut off mid-sentence)."""
    if doubled := _DOUBLED.search(reply):
        return f"It doubles a word ('{doubled.group(0)}')."
    for line in reply.splitlines():
        for sentence in split_sentences(line, chat=True):
            if sentence.endswith(("?", "!", ":")):
                continue
            words = re.findall(r"[\w']+", sentence.lower())
            if words and words[-1] in _DANGLING:
                return f"A sentence stops on '{words[-1]}'."
    return None


def ignored_greeting(reply: str, user: DialogueTurn | None) -> str | None:
    """The user greeted or took leave, and the reply has no greeting, farewell or thanks."""
    if user is None or _GREETS_BACK.search(reply):
        return None
    if _GREETING.search(user.content) and len(user.content.split()) <= GREETING_WORDS:
        return "It does not return the user's greeting."
    if _FAREWELL.search(user.content) and len(user.content.split()) <= GREETING_WORDS:
        return "It does not return the user's goodbye."
    return None


def ignored_proposal(reply: str, user: DialogueTurn | None) -> str | None:
    """The user proposed something and the reply neither accepts, declines nor takes up its words."""
    if user is None or _ANSWERS_PROPOSAL.search(reply) or reply.rstrip().endswith("?"):
        return None
    proposed = [s for s in split_sentences(user.content, chat=True) if _PROPOSAL.search(s)]
    words = _words(" ".join(proposed)) - _words("how about what let shall why don could suggest propose")
    if len(words) < 2 or len(words & _words(reply)) >= TAKEN_UP * len(words):
        return None
    return "It passes over the user's proposal."


def topic_jump(reply: str, turns: list[DialogueTurn], index: int) -> str | None:
    """The user made a statement (no question, no request) and the reply is about nothing said before."""
    user = _last_user(turns, index)
    if user is None or "?" in user.content or len(_words(user.content)) < 3:
        return None
    mine = _words(reply)
    before = set().union(*(_words(t.content) for t in turns[:index]))
    if len(mine) < MIN_TOPIC_WORDS or mine & _words(user.content):
        return None
    if len(mine & before) > NEW_TOPIC_SHARE * len(mine):
        return None
    return "It changes the subject to something nobody mentioned."


def missing_information(reply: str) -> str | None:
    """The reply announces something (a list, a link, something below) that is not there."""
    if _PROMISE_END.search(reply.rstrip("*_ \n")):
        return "It announces something and stops before giving it."
    if _LINK.search(reply) and not _URL.search(reply):
        return "It points to a link it does not give."
    return None


def rude(reply: str) -> str | None:
    """Rude or dismissive words."""
    found = _RUDE.search(reply)
    return f"It is rude ('{found.group(0)}')." if found else None


def task_failed(reply: str) -> str | None:
    """The bot says its own task failed."""
    found = _FAILED.search(reply)
    return f"It says the task failed ('{found.group(0)}')." if found else None


def _questions(text: str) -> list[set[str]]:
    asked = [s for s in split_sentences(text, chat=True) if s.rstrip("*_ ").endswith("?")]
    return [w for s in asked if len(w := _words(s)) >= 2]


def asked_again(reply: str, turns: list[DialogueTurn], index: int) -> str | None:
    """The bot asks again for what it was given: a question it asked before that the user answered
    (half its words or more the same), or 'your X' after the user said 'my X is ...'."""
    mine = _questions(reply)
    for j in range(index - 1):
        if turns[j].role != TurnRole.assistant or turns[j + 1].role != TurnRole.user:
            continue
        if "?" in turns[j + 1].content or not turns[j + 1].content.strip():
            continue  # the user did not answer it
        for old in _questions(turns[j].content):
            if any(len(q & old) >= 0.5 * len(q | old) for q in mine):
                return f"It asks again what the user answered at turn {j + 2}."
    said = [t.content for t in turns[:index] if t.role == TurnRole.user]
    given = {m.group(1).lower() for text in said for m in _MY_DETAIL.finditer(text)}
    asked = " ".join(s for s in split_sentences(reply, chat=True) if s.rstrip("*_ ").endswith("?"))
    for found in _YOUR_DETAIL.finditer(asked):
        if any(found.group(1).lower().endswith(g) or g.endswith(found.group(1).lower()) for g in given):
            return f"It asks for the user's {found.group(1)}, which the user already gave."
    return None


def too_long(reply: str) -> str | None:
    """More words than a chat turn needs."""
    n = len(reply.split())
    return f"It runs to {n} words." if n > LONG_REPLY_WORDS else None


def unclear(reply: str) -> str | None:
    """A template or raw data left in, or a sentence too long to follow."""
    if found := _TEMPLATE.search(reply):
        return f"It shows unfilled or raw text ('{found.group(0)}')."
    if len(fields := _RAW_FIELD.findall(reply)) >= 2:
        return f"It reads out stored fields as they are ('{fields[0]}')."
    for line in reply.splitlines():
        for sentence in split_sentences(line, chat=True):
            if len(sentence.split()) > LONG_SENTENCE_WORDS:
                return f"A sentence runs to {len(sentence.split())} words."
    return None


def capabilities_unsaid(reply: str, user: DialogueTurn | None) -> str | None:
    """The user asked what the bot can do; the reply says nothing of what it can or cannot do."""
    if user is None or not _CAPABILITY_QUESTION.search(user.content) or _STATES_CAPABILITY.search(reply):
        return None
    return "The user asked what it can do and it does not say."


def unresolved(reply: str) -> str | None:
    """An out-of-scope request turned down with no way forward (decided for a reply that declines one)."""
    return None if _WAY_FORWARD.search(reply) else "It turns the request down with no way forward."


def findings(
    turns: list[DialogueTurn], index: int, task_oriented: bool, out_of_domain_declined: bool
) -> dict[str, str]:
    """{type title: reason} of the rules of this module on the assistant turn at `index`; the
    task-oriented types only for a task-oriented bot."""
    reply = turns[index].content
    user = _last_user(turns, index)
    found = {
        "Grammatical error": grammatical_error(reply),
        "Ignore greeting": ignored_greeting(reply, user),
        "Ignore proposal": ignored_proposal(reply, user),
        "Topic transition error": topic_jump(reply, turns, index),
        "Lack of information": missing_information(reply),
        "Lack of sociality": rude(reply),
    }
    if task_oriented:
        found |= {
            "Task performance failure": task_failed(reply),
            "Redundancy": asked_again(reply, turns, index),
            "Lack of brevity": too_long(reply),
            "Lack of clarity": unclear(reply),
            "Failure to communicate capabilities": capabilities_unsaid(reply, user),
            "Failure to resolve out-of-domain request": unresolved(reply) if out_of_domain_declined else None,
        }
    return {title: reason for title, reason in found.items() if reason}
