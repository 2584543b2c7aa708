from django.apps import AppConfig


class AttemptsConfig(AppConfig):
    name = "attempts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from attempts.authentication import connect_evictions
        from attempts.jobs import HANDLERS
        from evaluation.jobs import register_handler

        for kind, handler in HANDLERS.items():
            register_handler(kind, handler)
        connect_evictions()
