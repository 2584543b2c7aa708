from django.apps import AppConfig
from django.urls import register_converter

from interviewprep.converters import IdConverter


class InterviewPrepConfig(AppConfig):
    """The project itself, installed so its system checks and path converters are registered."""

    name = "interviewprep"

    def ready(self) -> None:
        from interviewprep import checks  # noqa: F401 - importing it registers the checks

        # Before any URLconf is read: every route's ids are `<id:...>`.
        register_converter(IdConverter, "id")
