from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0007_ops_dashboard")]

    operations = [
        migrations.AddIndex(
            model_name="evaluationjob",
            index=models.Index(
                condition=models.Q(status__in=("pending", "queued", "retrying")),
                fields=["kind", "id"],
                name="job_waiting_kind",
            ),
        ),
    ]
