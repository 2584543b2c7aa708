from django.apps import AppConfig


class InterviewPrepConfig(AppConfig):
    """The project itself, installed only so its system checks are registered."""

    name = "interviewprep"

    def ready(self) -> None:
        from interviewprep import checks  # noqa: F401 - importing it registers the checks
