from django.apps import AppConfig


class AttemptsConfig(AppConfig):
    name = "attempts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Both need the models, so they load once the registry is ready (Django's idiom).
        from attempts import jobs, jobs_regrade  # noqa: F401 - importing them registers the job handlers
        from attempts.authentication import connect_evictions

        connect_evictions()
