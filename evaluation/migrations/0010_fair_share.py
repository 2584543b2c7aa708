from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0008_waiting_jobs_index")]

    operations = [
        migrations.AddField(
            model_name="evaluationjob",
            name="share_key",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddIndex(
            model_name="evaluationjob",
            index=models.Index(
                condition=models.Q(("status__in", ["queued", "running"]), models.Q(("share_key", ""), _negated=True)),
                fields=["share_key", "kind"],
                name="job_share_in_flight",
            ),
        ),
    ]
