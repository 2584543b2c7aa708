"""The PL/pgSQL submit is gone: the Python service is the only path of a submit."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("attempts", "0002_submit_function")]

    operations = [
        migrations.RunSQL("DROP FUNCTION IF EXISTS attempts_submission_create_fresh;", migrations.RunSQL.noop)
    ]
