from django.apps import AppConfig
from django.conf import settings

from interviewprep.celery import app
from interviewprep.rabbitmq import amqp_task_queues


class EvaluationConfig(AppConfig):
    name = "evaluation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The registry needs the models; the apps that register job kinds come before this one
        # in INSTALLED_APPS, so their ready() has run. A queue missed here fails loudly on
        # RabbitMQ (no missing queue is created there).
        from evaluation.jobs.queue_depths import broker_queues

        config = settings.CONFIG
        if config.broker_is_amqp:
            app.conf.task_queues = amqp_task_queues(
                broker_queues(),
                delivery_limit=config.broker_delivery_limit,
                consumer_timeout=config.broker_consumer_timeout,
            )
