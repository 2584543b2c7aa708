"""Jobs name their subject by kind and id, so the job machinery knows no other app's tables;
the PL/pgSQL claim and result functions are gone (the Python services are the only path)."""

from django.db import migrations, models

COPY_SUBJECTS = """
UPDATE evaluation_evaluationjob SET subject_id = COALESCE(submission_id, practice_request_id);
UPDATE evaluation_deadletter SET subject_id = COALESCE(submission_id, practice_request_id),
    context = jsonb_strip_nulls(jsonb_build_object(
        'attempt_id', attempt_id, 'submission_id', submission_id, 'practice_request_id', practice_request_id));
UPDATE evaluation_outbox SET task_name = 'evaluation.tasks.run_job';
"""
DROP_FUNCTIONS = """
DROP FUNCTION IF EXISTS evaluation_job_claim_queued;
DROP FUNCTION IF EXISTS evaluation_job_record_result;
"""


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0002_hot_path_functions")]

    operations = [
        migrations.RunSQL(DROP_FUNCTIONS, migrations.RunSQL.noop),
        migrations.AddField("evaluationjob", "subject_id", models.BigIntegerField(null=True)),
        migrations.AddField("deadletter", "subject_id", models.BigIntegerField(null=True)),
        migrations.AddField("deadletter", "context", models.JSONField(blank=True, default=dict)),
        migrations.RunSQL(COPY_SUBJECTS, migrations.RunSQL.noop),
        migrations.AlterField("evaluationjob", "subject_id", models.BigIntegerField()),
        migrations.AlterField("deadletter", "subject_id", models.BigIntegerField()),
        migrations.RemoveConstraint("evaluationjob", "job_has_its_subject"),
        migrations.RemoveField("evaluationjob", "submission"),
        migrations.RemoveField("evaluationjob", "practice_request"),
        migrations.RemoveField("deadletter", "attempt_id"),
        migrations.RemoveField("deadletter", "submission_id"),
        migrations.RemoveField("deadletter", "practice_request_id"),
        migrations.AlterField("evaluationjob", "kind", models.CharField(max_length=20)),
        migrations.AlterField("deadletter", "kind", models.CharField(max_length=20)),
        migrations.AddIndex("evaluationjob", models.Index(fields=["kind", "subject_id"], name="job_kind_subject")),
    ]
