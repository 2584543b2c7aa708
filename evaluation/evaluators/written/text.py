"""What the written-answer grader reads from the text alone, with no model: sentences, words, which
sentences can carry an idea, what counts as specific, the language, and the speaking insights."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

WORD = re.compile(r"[A-Za-z\u00C0-\u024F0-9]+(?:['\u2019][A-Za-z]+)?")
# A sentence ends at . ! ? followed by space, at a blank line, or where a bulleted line starts; a
# single line break is only wrapping. Bullets and numbering are dropped from the sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n\s*|\n(?=\s*(?:[-*\u2022]|\d+[.)])\s)")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")

# English function words: a sentence made of terms has almost none, any English prose has many.
FUNCTION_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers him his how i if in into is it its itself just me more most my
    no nor not of off on once only or other our ours out over own same she should so some such than
    that the their them then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours""".split()
)
# Function words of the languages a non-English answer is most likely in; none of them is English.
FOREIGN_FUNCTION_WORDS = (
    frozenset(
        """el la los las del que y en un una por con para es se lo como pero más muy está son
    le les des et est une dans pour pas sur au avec ce qui sont ou mais nous vous ils elle
    der das und ist nicht ein eine zu mit sich auf für dem ich wir auch oder aber
    il di che non sono della gli una questo essere
    não uma os em por com para mais como foi ao seu sua
    het een van niet zijn voor met aan ook maar bij""".split()
    )
    - FUNCTION_WORDS
)

NUMBER_WORDS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty
    fifty sixty hundred hundreds thousand thousands million millions billion half twice double doubled
    halved tripled triple quarter percent dozen""".split()
)
_DIGITS = re.compile(r"\d")
FILLERS = (
    "um",
    "uh",
    "erm",
    "like",
    "basically",
    "actually",
    "literally",
    "you know",
    "i mean",
    "sort of",
    "kind of",
    "stuff",
    "things like that",
)
# "like" is a filler only where it is not a verb or preposition with an object we can tell apart
# cheaply; counting every "like" would call "services like Redis" a filler, so only ", like," counts.
_FILLER_PATTERNS = {
    filler: re.compile(r",\s*like\s*," if filler == "like" else rf"\b{re.escape(filler)}\b", re.IGNORECASE)
    for filler in FILLERS
}
SPEAKING_WORDS_PER_MINUTE = 130

# A sentence shorter than this, or with fewer content words, is too short to carry an idea.
MIN_IDEA_WORDS = 8
# Longer than this is a run-on of terms, not a sentence a person says in one breath.
MAX_IDEA_WORDS = 60
MIN_CONTENT_WORDS = 4
# A sentence whose words are less than this share function words is a list of terms, not a claim.
MIN_FUNCTION_SHARE = 0.2


def words(text: str) -> list[str]:
    return WORD.findall(text)


def sentences(text: str) -> list[str]:
    """The answer's sentences, each verbatim (only outer whitespace and a leading bullet removed)."""
    found = []
    for piece in _SENTENCE_END.split(text):
        piece = _BULLET.sub("", piece).strip()
        if words(piece):
            found.append(piece)
    return found


def _lower_words(text: str) -> list[str]:
    return [w.lower().replace("\u2019", "'") for w in words(text)]


def carries_an_idea(sentence: str) -> bool:
    """The density gate: long enough, with enough content words, and written as prose rather than
    as a list of terms (a comma-run of nouns, or nouns with nothing joining them)."""
    tokens = _lower_words(sentence)
    function = sum(1 for t in tokens if t in FUNCTION_WORDS)
    content = len(tokens) - function
    if not MIN_IDEA_WORDS <= len(tokens) <= MAX_IDEA_WORDS or content < MIN_CONTENT_WORDS:
        return False
    if function / len(tokens) < MIN_FUNCTION_SHARE:
        return False
    # "caching, sharding, queues, replicas and backpressure" is a list even with an "and".
    return sentence.count(",") + sentence.count(";") < len(tokens) / 4


def is_specific(sentence: str) -> bool:
    """Carries a number or a quantity: what a result needs to be more than a claim."""
    if _DIGITS.search(sentence):
        return True
    return any(t in NUMBER_WORDS for t in _lower_words(sentence))


def looks_not_english(text: str) -> bool:
    """Mostly another script, or more function words of another language than of English."""
    letters = [c for c in text if c.isalpha()]
    if letters and sum(1 for c in letters if c.isascii() or "\u00c0" <= c <= "\u024f") / len(letters) < 0.7:
        return True
    tokens = _lower_words(text)
    english = sum(1 for t in tokens if t in FUNCTION_WORDS)
    foreign = sum(1 for t in tokens if t in FOREIGN_FUNCTION_WORDS)
    # A share, not only a count: a list of terms has no English function words to outnumber.
    return foreign >= 3 and foreign > english and foreign >= len(tokens) / 10


@dataclass(frozen=True)
class Insights:
    words: int
    speaking_minutes: float
    repeated_words: list[dict[str, Any]]
    filler_words: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "words": self.words,
            "speaking_minutes": self.speaking_minutes,
            "repeated_words": self.repeated_words,
            "filler_words": self.filler_words,
        }


def insights(text: str) -> Insights:
    """Length in speaking minutes, the content words said three times or more, and fillers."""
    tokens = _lower_words(text)
    counts = Counter(t for t in tokens if t not in FUNCTION_WORDS and len(t) > 2 and not t.isdigit())
    repeated = [{"word": w, "count": n} for w, n in counts.most_common(5) if n >= 3]
    fillers = []
    for filler, pattern in _FILLER_PATTERNS.items():
        if count := len(pattern.findall(text)):
            fillers.append({"word": filler, "count": count})
    fillers.sort(key=lambda f: (-f["count"], f["word"]))
    return Insights(
        words=len(tokens),
        speaking_minutes=round(len(tokens) / SPEAKING_WORDS_PER_MINUTE, 1),
        repeated_words=repeated,
        filler_words=fillers,
    )
