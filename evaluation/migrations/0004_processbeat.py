"""Processes report their liveness in a table; the sweeper leaves beat's schedule for the relay's
loop, so its stored periodic task goes too."""

from django.db import migrations, models


def drop_sweep_periodic_task(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name="sweep-stale-jobs").delete()


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0003_generic_jobs"), ("django_celery_beat", "0001_initial")]

    operations = [
        migrations.CreateModel(
            name="ProcessBeat",
            fields=[
                ("name", models.CharField(max_length=200, primary_key=True, serialize=False)),
                (
                    "role",
                    models.CharField(choices=[("sweeper", "Sweeper"), ("worker", "Worker")], max_length=20),
                ),
                ("queues", models.CharField(blank=True, max_length=200)),
                ("beat_at", models.DateTimeField()),
                ("room_since", models.DateTimeField(blank=True, null=True)),
                ("took_job_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={"ordering": ["role", "name"]},
        ),
        migrations.RunPython(drop_sweep_periodic_task, migrations.RunPython.noop),
    ]
