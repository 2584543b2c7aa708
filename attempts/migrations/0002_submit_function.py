from pathlib import Path

from django.db import migrations

SQL = (Path(__file__).resolve().parent.parent / "sql" / "submit.sql").read_text()
DROP = """
DROP FUNCTION IF EXISTS attempts_submission_create_fresh(
    bigint, bigint, text, text, text, timestamptz, timestamptz, integer, text, text);
"""


class Migration(migrations.Migration):
    dependencies = [("attempts", "0001_initial"), ("evaluation", "0001_initial")]

    operations = [migrations.RunSQL(SQL, DROP)]
