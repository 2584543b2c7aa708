from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0005_dead_letter_console")]

    operations = [
        migrations.AddField(
            model_name="evaluationjob",
            name="request_id",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name="jobtry",
            name="request_id",
            field=models.CharField(blank=True, max_length=64),
        ),
    ]
