from pathlib import Path

from django.db import migrations

SQL = (Path(__file__).resolve().parent.parent / "sql" / "hot_path.sql").read_text()
DROP = """
DROP FUNCTION IF EXISTS evaluation_job_claim_queued(bigint, uuid, text, timestamptz);
DROP FUNCTION IF EXISTS evaluation_job_record_result(
    bigint, bigint, bigint, uuid, bigint, double precision, double precision, text, jsonb, text, timestamptz,
    double precision);
"""


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0001_initial")]

    operations = [migrations.RunSQL(SQL, DROP)]
