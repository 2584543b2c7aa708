from django.apps import AppConfig


class AttemptsConfig(AppConfig):
    name = "attempts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from attempts.authentication import connect_evictions

        connect_evictions()
