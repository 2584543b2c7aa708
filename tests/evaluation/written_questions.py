"""A written question of the tests' own, in the bank's format, with its labelled answers."""

from __future__ import annotations

PROMPT = "Design a URL shortener that turns long links into short codes and redirects millions of visitors a day."

SPEC = {
    "criteria": [
        {
            "id": "codes",
            "title": "Generating short codes",
            "weight": 25,
            "description": "Explains how unique short codes are made without collisions.",
            "examples": [
                "Each new link takes the next value of a counter and we encode that number in base62, so codes never "
                "collide.",
                "We hand every application server a block of a thousand ids, so two servers can never issue the same "
                "code.",
            ],
            "missing": "Say how a short code is generated and why two links can never get the same one.",
            "follow_up": "What happens to your code generation when two servers create links at the same moment?",
        },
        {
            "id": "reads",
            "title": "Serving redirects fast",
            "weight": 25,
            "description": "Caches hot codes so redirects do not hit the database.",
            "examples": [
                "Redirects are read far more than links are written, so the hot codes sit in a Redis cache in front "
                "of the database.",
                "A cache hit answers the redirect in about a millisecond and only a miss goes to the key-value store.",
            ],
            "missing": "Explain how redirects are served without a database read each time, for example from a cache.",
            "follow_up": "How do you keep the cache useful when a link suddenly goes viral?",
        },
        {
            "id": "scale",
            "title": "Estimating the load",
            "weight": 20,
            "specific": True,
            "description": "Puts numbers on reads, writes and storage.",
            "examples": [
                "With a hundred million redirects a day we serve roughly twelve hundred reads per second, peaking at "
                "five thousand.",
                "Ten million new links a month at five hundred bytes each is about sixty gigabytes of storage a year.",
            ],
            "missing": "Estimate the traffic and storage with numbers: reads per second, writes per second, bytes "
            "per year.",
            "follow_up": "How many redirects per second must the system handle at peak, and how did you get there?",
        },
        {
            "id": "expiry",
            "title": "Expiry and abuse",
            "weight": 15,
            "description": "Handles expiring links and abuse such as spam or malware links.",
            "examples": [
                "Links can carry an expiry date, and a nightly job deletes the expired ones and frees their codes.",
                "New links are checked against a malware list and each account is rate limited to stop spammers.",
            ],
            "missing": "Say what happens to old links and how you stop the service being used to spread spam or "
            "malware.",
            "follow_up": "How would you find and disable a short link that already spreads malware?",
        },
        {
            "id": "length",
            "title": "Depth and length",
            "weight": 15,
            "type": "length",
            "min_words": 150,
            "max_words": 900,
        },
    ]
}

STRONG = """\
First the numbers. If we get a hundred million redirects a day, that is roughly twelve hundred reads per
second on average and perhaps five thousand at peak, while writes are about a hundred times fewer. Ten
million new links a month at around five hundred bytes each comes to about sixty gigabytes a year, which
fits comfortably in one replicated key-value store.

For the codes I would use a counter rather than hashing the URL. Each application server reserves a block
of a thousand ids from a central sequence, and encodes each id in base62, so two servers can never hand
out the same code and a seven character code covers trillions of links.

Redirects are read far more than they are written, so hot codes live in a Redis cache in front of the
store. A cache hit answers in about a millisecond, and only a miss reads the database and fills the cache.

Links may carry an expiry date, and a nightly job removes expired links. Every new link is checked
against a malware list, and each account is rate limited so spammers cannot flood the service.
"""

WEAK = """\
I would build a service that stores the long URL and gives back a short one. It needs a database to keep
the links and a web server to do the redirect. It should be fast and reliable because many people use it.
I would make sure it can scale when more users arrive, and I would monitor it in production. Security is
important too, so I would think about bad links. Overall the design should be simple and easy to run.
"""

HONEST_SHORT = """\
Every new link gets the next number from a counter, and I encode it in base62 so codes never collide.
Redirects are much more common than new links, so the popular codes are kept in a Redis cache in front
of the database. At about a hundred million redirects a day we need roughly twelve hundred reads per
second. Old links expire after a year and a nightly job deletes them.
"""

LABELLED = {"strong": STRONG, "weak": WEAK, "honest_short": HONEST_SHORT, "stuffed": []}

OFF_TOPIC = """\
To make a good tomato sauce, warm olive oil in a heavy pan over a low flame. Add a chopped onion and two
cloves of garlic and let them soften slowly, stirring now and then. Pour in a tin of crushed tomatoes, a
pinch of salt and a handful of torn basil leaves. Let the sauce simmer gently for half an hour until it
thickens, then serve it over fresh pasta with grated cheese.
"""

SPANISH = """\
Para diseñar el acortador de enlaces usaría un contador y codificaría cada número en base62, de modo que
los códigos nunca se repiten. Las redirecciones son mucho más frecuentes que los enlaces nuevos, por eso
los códigos populares se guardan en una caché delante de la base de datos, y los enlaces caducan al año.
"""
