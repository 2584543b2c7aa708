"""The dead-letter console: each letter's error class to group by (filled in for the letters
there are), and an audit row per replay."""

import re

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def fill_error_class(apps, schema_editor):
    # As evaluation.jobs.outcomes names them, as of this migration.
    pattern = re.compile(r"(?:^|Last error: )([A-Za-z_][\w.]*): ")
    DeadLetter = apps.get_model("evaluation", "DeadLetter")
    for letter in DeadLetter.objects.only("id", "error").iterator():
        if "the last one never finished" in letter.error:
            name = "WorkerLost"
        else:
            match = pattern.search(letter.error)
            name = match.group(1)[:100] if match else "unknown"
        DeadLetter.objects.filter(pk=letter.pk).update(error_class=name)


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0004_processbeat"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="DeadLetterReplay",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "outcome",
                    models.CharField(choices=[("requeued", "Requeued"), ("skipped", "Skipped")], max_length=20),
                ),
                ("reason", models.CharField(blank=True, max_length=200)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "verbose_name": "dead-letter replay",
                "verbose_name_plural": "dead-letter replays",
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.AlterModelOptions(
            name="jobtry",
            options={"ordering": ["job_id", "number"], "verbose_name": "job try", "verbose_name_plural": "job tries"},
        ),
        migrations.AlterModelOptions(
            name="outbox",
            options={"ordering": ["id"], "verbose_name": "outbox message", "verbose_name_plural": "outbox messages"},
        ),
        migrations.AddField(
            model_name="deadletter",
            name="error_class",
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.RunPython(fill_error_class, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="deadletter",
            index=models.Index(fields=["error_class", "created_at"], name="dead_letter_error_class"),
        ),
        migrations.AddField(
            model_name="deadletterreplay",
            name="dead_letter",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="replays", to="evaluation.deadletter"
            ),
        ),
        migrations.AddField(
            model_name="deadletterreplay",
            name="job",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="evaluation.evaluationjob",
            ),
        ),
        migrations.AddField(
            model_name="deadletterreplay",
            name="user",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
