"""Domain errors that services raise; the API maps each one to problem details, the web pages
to a message. Raising one inside a transaction rolls it back, so a refusal writes nothing."""


class DomainError(Exception):
    status_code = 400
    code = "error"

    def __init__(self, detail: str, *, headers: dict | None = None, **extra):
        super().__init__(detail)
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


class NotFound(DomainError):
    status_code = 404
    code = "not-found"


class InvalidInput(DomainError):
    status_code = 400
    code = "invalid"


class AnswerTooLarge(DomainError):
    status_code = 413
    code = "content-too-large"


class IdempotencyKeyReused(DomainError):
    status_code = 422
    code = "idempotency-key-reused"


class Overloaded(DomainError):
    status_code = 503
    code = "overloaded"

    def __init__(self, detail: str, *, retry_after: int, **extra):
        super().__init__(detail, headers={"Retry-After": str(retry_after)}, retry_after=retry_after, **extra)


class LoginLockedOut(DomainError):
    status_code = 429
    code = "throttled"

    def __init__(self, detail: str, *, retry_after: int, **extra):
        super().__init__(detail, headers={"Retry-After": str(retry_after)}, retry_after=retry_after, **extra)


class IllegalTransition(DomainError):
    status_code = 409
    code = "illegal-transition"
