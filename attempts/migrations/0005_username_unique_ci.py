"""Usernames are unique regardless of case: `Ada` beside `ada` would be two accounts a person
cannot tell apart, and logging in ignores case. The index also serves that login's lookup.

Accounts that already differ only in case stop the migration with their names: which of them is
the person's is a human decision, never a silent merge."""

from django.db import migrations

CREATE_INDEX = """
DO $$
DECLARE
    clashes text;
BEGIN
    SELECT string_agg(names, '; ') INTO clashes FROM (
        SELECT string_agg(username, ', ' ORDER BY id) AS names
        FROM auth_user GROUP BY lower(username) HAVING count(*) > 1
    ) AS clash;
    IF clashes IS NOT NULL THEN
        RAISE EXCEPTION 'Usernames must be unique regardless of case, but these accounts differ only in case: %', clashes
            USING HINT = 'Rename all but one account of each group (or merge them by hand), then migrate again.';
    END IF;
END $$;
CREATE UNIQUE INDEX auth_user_username_lower_uniq ON auth_user (lower(username));
"""

DROP_INDEX = "DROP INDEX IF EXISTS auth_user_username_lower_uniq;"


class Migration(migrations.Migration):
    dependencies = [
        ("attempts", "0004_run_and_attempt_draft"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunSQL(CREATE_INDEX, DROP_INDEX)]
