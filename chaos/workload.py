"""Concurrent candidates through the REST API: register, open attempts, submit with an
Idempotency-Key, send the same key again (a replay, or two at once as a double click), submit
again to supersede, ask for practice questions, and read their attempts. Each candidate's
choices come from the round's seed; what the API accepted is kept for the checks."""

from __future__ import annotations

import random
import threading
import time
import uuid
from dataclasses import dataclass, field

from chaos.client import Answer, Client, Counters, GaveUp

# Extension point (runs): when `POST /api/v1/attempts/{id}/runs/` exists in this tree, add a
# "run" action here (a key of its own, like a submit) and its final-state rule in checks.py.
ACTIONS = ("submit", "replay", "double", "read", "practice", "practice-replay", "create")
WEIGHTS = (35, 12, 8, 15, 8, 4, 6)


@dataclass(frozen=True)
class Question:
    id: int
    slug: str
    kind: str
    evaluator: str
    reference: str = ""
    wrong: str = ""


@dataclass
class Sent:
    """One user action carried by one Idempotency-Key, and the first answer the API gave it."""

    kind: str  # "submit", "practice" or "create"
    username: str
    key: str
    path: str
    body: dict
    expect: str = ""  # for a submit: "score=NN", "all-pass", "not-all-pass" or "" (rubric)
    answer: Answer | None = None

    @property
    def confirmed(self) -> bool:
        return self.answer is not None and 200 <= self.answer.status < 300


@dataclass
class Workload:
    port: int
    seed: int
    questions: list[Question]
    rngs: list[random.Random]
    duration: float
    max_actions: int = 20
    counters: Counters = field(default_factory=Counters)
    sent: list[Sent] = field(default_factory=list)
    users: dict[str, str] = field(default_factory=dict)  # username -> token
    violations: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    threads: list[threading.Thread] = field(default_factory=list)
    candidates: list[_Candidate] = field(default_factory=list)

    def prepare(self) -> None:
        """Sign every candidate up and open their first attempts, before the fault clock starts:
        password hashing is slow by design, and faults are meant for the submits."""
        self.candidates = [_Candidate(self, index, rng) for index, rng in enumerate(self.rngs)]
        self._all(lambda candidate: candidate.prepare)

    def start(self) -> None:
        deadline = time.monotonic() + self.duration
        for candidate in self.candidates:
            candidate.deadline = deadline
        self._all(lambda candidate: candidate.run, wait=False)

    def _all(self, target, *, wait: bool = True) -> None:
        self.threads = [
            threading.Thread(target=_guarded(target(c), self, c.username), name=c.username, daemon=True)
            for c in self.candidates
        ]
        for thread in self.threads:
            thread.start()
        if wait:
            self.join()

    def join(self) -> None:
        for thread in self.threads:
            thread.join()

    def done(self) -> bool:
        return not any(t.is_alive() for t in self.threads)

    def violation(self, text: str) -> None:
        with self.lock:
            self.violations.append(text)

    def keep(self, sent: Sent) -> Sent:
        with self.lock:
            self.sent.append(sent)
        return sent


def _guarded(target, workload: Workload, username: str):
    def run() -> None:
        try:
            target()
        except GaveUp as exc:
            workload.violation(f"{username}: {exc}")

    return run


class _Candidate:
    def __init__(self, workload: Workload, index: int, rng: random.Random) -> None:
        self.w = workload
        self.rng = rng
        self.deadline = 0.0
        self.username = f"chaos{workload.seed}c{index}"
        self.client = Client(workload.port, workload.counters)
        self.attempts: dict[int, Question] = {}
        self.seen: dict[int, int] = {}  # attempt id -> highest version this candidate was shown
        self.accepted: list[Sent] = []
        self.requests: list[int] = []  # practice requests not yet seen fulfilled

    def prepare(self) -> None:
        self.sign_up()
        self.create()

    def run(self) -> None:
        if self.client.token is None:
            return  # its sign-up failed, and said so
        for _ in range(self.w.max_actions):
            if time.monotonic() > self.deadline:
                break
            action = self.rng.choices(ACTIONS, WEIGHTS)[0]
            getattr(self, action.replace("-", "_"))()
            # Think time: spreads the load over the fault window (pacing, not synchronisation).
            time.sleep(self.rng.uniform(0.1, 0.6))

    def sign_up(self) -> None:
        password = f"Chaos-{uuid.UUID(int=self.rng.getrandbits(128)).hex}"
        credentials = {"username": self.username, "password": password}
        answer = self.client.send("POST", "/api/v1/auth/register/", credentials)
        if answer.status == 201:
            self.client.token = answer.json()["token"]
        else:
            # A 400 follows a register whose answer was lost (a 5xx after its commit): ask for the token.
            token = self.client.send("POST", "/api/v1/auth/token/", credentials)
            if token.status != 200:
                raise GaveUp(f"register answered {answer.status}, the token call {token.status} {token.body[:200]!r}")
            self.client.token = token.json()["token"]
        with self.w.lock:
            self.w.users[self.username] = self.client.token

    def _key(self) -> str:
        return uuid.UUID(int=self.rng.getrandbits(128)).hex

    def _send(self, sent: Sent, expected: int) -> Sent:
        sent.answer = self.client.send("POST", sent.path, sent.body, key=sent.key)
        if sent.answer.status != expected:
            self.w.violation(f"{self.username}: {sent.kind} answered {sent.answer.status} {sent.answer.body[:200]!r}")
        self.w.keep(sent)
        if sent.confirmed:
            self.accepted.append(sent)
        return sent

    def _pick(self, questions: list[Question]) -> Question:
        return questions[self.rng.randrange(len(questions))]

    def create(self) -> None:
        kind = self.rng.choices(["instant", "code", "rubric"], [6, 2, 2])[0]
        pool = [q for q in self.w.questions if q.evaluator == kind] or self.w.questions
        question = self._pick(pool)
        sent = Sent("create", self.username, self._key(), "/api/v1/attempts/", {"question_id": question.id})
        self._send(sent, 201)
        if sent.confirmed:
            self.attempts[sent.answer.json()["id"]] = question
            if self.rng.random() < 0.3:
                self._replay(sent)

    def _answer(self, question: Question) -> tuple[str, str]:
        if question.evaluator == "instant":
            score = self.rng.randrange(101)
            # Some answers fail their first try on purpose: retries under faults.
            extra = " transient=1" if self.rng.random() < 0.15 else ""
            return f"score={score}{extra} from {self.username}", f"score={score}"
        if question.evaluator == "code":
            if question.wrong and self.rng.random() < 0.3:
                return question.wrong, "not-all-pass"
            return question.reference, "all-pass"
        return question.reference or "I listened, decided, and measured the outcome.", ""

    def submit(self) -> None:
        if not self.attempts:
            return self.create()
        attempt_id = self.rng.choice(sorted(self.attempts))
        text, expect = self._answer(self.attempts[attempt_id])
        path = f"/api/v1/attempts/{attempt_id}/submissions/"
        sent = self._send(Sent("submit", self.username, self._key(), path, {"answer": text}, expect), 202)
        if sent.confirmed:
            self._saw(attempt_id, sent.answer.json()["version"])

    def replay(self) -> None:
        earlier = [s for s in self.accepted if s.kind == "submit"]
        if earlier:
            self._replay(self.rng.choice(earlier))

    def practice_replay(self) -> None:
        earlier = [s for s in self.accepted if s.kind == "practice"]
        if earlier:
            self._replay(self.rng.choice(earlier))

    def _replay(self, first: Sent) -> None:
        """The same key and body again: the first answer, byte for byte."""
        assert first.answer is not None
        again = self.client.send("POST", first.path, first.body, key=first.key)
        if again.status != first.answer.status or again.body != first.answer.body:
            self.w.violation(
                f"{self.username}: replay of key {first.key} answered {again.status} {again.body[:200]!r}, "
                f"first {first.answer.status} {first.answer.body[:200]!r}"
            )

    def double(self) -> None:
        """Two identical requests at once (a double click): one submission, one answer for both."""
        if not self.attempts:
            return
        attempt_id = self.rng.choice(sorted(self.attempts))
        text, expect = self._answer(self.attempts[attempt_id])
        sent = Sent(
            "submit",
            self.username,
            self._key(),
            f"/api/v1/attempts/{attempt_id}/submissions/",
            {"answer": text},
            expect,
        )
        barrier = threading.Barrier(2)
        answers: list[Answer | GaveUp] = []

        def click() -> None:
            twin = Client(self.client.port, self.w.counters, self.client.token)
            barrier.wait()
            try:
                answers.append(twin.send("POST", sent.path, sent.body, key=sent.key))
            except GaveUp as exc:
                answers.append(exc)

        clicks = [threading.Thread(target=click) for _ in range(2)]
        for thread in clicks:
            thread.start()
        for thread in clicks:
            thread.join()
        for answer in answers:
            if isinstance(answer, GaveUp):
                raise answer
        first, second = answers
        sent.answer = first
        self.w.keep(sent)
        if first.status != 202 or (first.status, first.body) != (second.status, second.body):
            self.w.violation(
                f"{self.username}: double click answered {first.status} {first.body[:200]!r}"
                f" and {second.status} {second.body[:200]!r}"
            )
        elif sent.confirmed:
            self.accepted.append(sent)
            self._saw(attempt_id, first.json()["version"])

    def practice(self) -> None:
        kind = self.rng.choice(["coding", "system_design", "behavioral"])
        sent = self._send(
            Sent("practice", self.username, self._key(), "/api/v1/practice-requests/", {"kind": kind}), 202
        )
        if sent.confirmed:
            self.requests.append(sent.answer.json()["id"])

    def read(self) -> None:
        """Read an attempt no older than this candidate has seen; adopt a fulfilled practice attempt."""
        if self.requests and self.rng.random() < 0.4:
            request_id = self.requests.pop(0)
            answer = self.client.send("GET", f"/api/v1/practice-requests/{request_id}/")
            data = answer.json() if answer.status == 200 else {}
            if data.get("attempt_id"):
                question = next((q for q in self.w.questions if q.id == data["question_id"]), None)
                if question is not None:
                    self.attempts[data["attempt_id"]] = question
            elif data.get("status") in ("queued", "processing"):
                self.requests.append(request_id)
            return
        if not self.attempts:
            return
        attempt_id = self.rng.choice(sorted(self.attempts))
        floor = self.seen.get(attempt_id, 0)
        answer = self.client.send("GET", f"/api/v1/attempts/{attempt_id}/?min_version={floor}")
        if answer.status != 200:
            self.w.violation(f"{self.username}: read of attempt {attempt_id} answered {answer.status}")
            return
        data = answer.json()
        if data["version"] < floor:
            self.w.violation(
                f"{self.username}: attempt {attempt_id} served at v{data['version']} after v{floor} was seen"
            )
        result = data.get("result")
        if result is not None and result["submission_id"] != data["latest_submission_id"]:
            self.w.violation(
                f"{self.username}: attempt {attempt_id} showed the result of submission {result['submission_id']},"
                f" not of the latest {data['latest_submission_id']}"
            )
        self._saw(attempt_id, data["version"])

    def _saw(self, attempt_id: int, version: int) -> None:
        self.seen[attempt_id] = max(self.seen.get(attempt_id, 0), version)
