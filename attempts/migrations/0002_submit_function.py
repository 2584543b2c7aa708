from django.db import migrations

SQL = r"""
-- Frozen copy of the function as first installed; 0003 drops it.
CREATE OR REPLACE FUNCTION attempts_submission_create_fresh(
    p_user bigint, p_attempt bigint, p_answer text, p_key text, p_fingerprint text,
    p_now timestamptz, p_expires_at timestamptz, p_max_tries integer, p_task_name text, p_queue text
) RETURNS TABLE (
    outcome text,
    evaluator text,
    attempt_id bigint,
    submission_id bigint,
    attempt_version bigint,
    outbox_id bigint,
    status_code integer,
    stored_fingerprint text,
    body bytea
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_record bigint;
    a attempts_attempt%ROWTYPE;
    v_evaluator text;
    v_submission bigint;
    v_job bigint;
    v_outbox bigint;
    v_actor text := 'user:' || p_user;
    v_body bytea;
BEGIN
    INSERT INTO attempts_idempotencyrecord (user_id, key, fingerprint, created_at, expires_at)
    VALUES (p_user, p_key, p_fingerprint, p_now, p_expires_at)
    ON CONFLICT (user_id, key) DO NOTHING
    RETURNING id INTO v_record;
    IF v_record IS NULL THEN
        -- A finished, unexpired record is answered from here (the caller replays it or refuses
        -- another body); any other state of the key is the general path's.
        RETURN QUERY SELECT CASE WHEN r.status_code IS NOT NULL AND r.expires_at > p_now
                                 THEN 'replay' ELSE 'key_exists' END,
            NULL::text, NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint,
            r.status_code::integer, r.fingerprint::text, r.response_body
          FROM attempts_idempotencyrecord r WHERE r.user_id = p_user AND r.key = p_key;
        IF NOT FOUND THEN
            -- Deleted (purged) between the insert and this read: the general path decides.
            RETURN QUERY SELECT 'key_exists'::text, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint,
                NULL::bigint, NULL::integer, NULL::text, NULL::bytea;
        END IF;
        RETURN;
    END IF;
    SELECT * INTO a FROM attempts_attempt WHERE id = p_attempt AND user_id = p_user FOR UPDATE;
    IF a.id IS NULL THEN
        -- The caller answers 404 and rolls back, the key's row included.
        RETURN QUERY SELECT 'not_found'::text, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint,
            NULL::bigint, NULL::integer, NULL::text, NULL::bytea;
        RETURN;
    END IF;
    SELECT q.evaluator INTO v_evaluator FROM attempts_question q WHERE q.id = a.question_id;
    INSERT INTO attempts_submission (attempt_id, answer, status, idempotency_key, created_at, updated_at)
    VALUES (a.id, p_answer, 'queued', p_key, p_now, p_now)
    RETURNING id INTO v_submission;
    -- Older unfinished submissions are superseded, each move recorded before the attempt's.
    WITH older AS (
        SELECT s.id, s.status FROM attempts_submission s
         WHERE s.attempt_id = a.id AND s.status IN ('queued', 'processing') AND s.id <> v_submission
    ), moved AS (
        UPDATE attempts_submission s SET status = 'superseded'
          FROM older WHERE s.id = older.id
        RETURNING s.id, older.status AS from_status
    )
    INSERT INTO attempts_statechange (entity, object_id, from_status, to_status, actor, reason, created_at)
    SELECT 'submission', moved.id, moved.from_status, 'superseded', v_actor,
           'superseded by submission ' || v_submission, p_now
      FROM moved ORDER BY moved.id;
    UPDATE attempts_attempt
       SET status = 'queued', version = version + 1, latest_submission_id = v_submission, updated_at = p_now
     WHERE id = a.id;
    INSERT INTO attempts_statechange (entity, object_id, from_status, to_status, actor, reason, created_at)
    VALUES ('attempt', a.id, a.status, 'queued', v_actor, 'submission ' || v_submission, p_now);
    INSERT INTO evaluation_evaluationjob
        (kind, submission_id, status, tries, max_tries, lease_token, last_error, discard_reason,
         correlation_id, created_at, updated_at)
    VALUES ('evaluate', v_submission, 'pending', 0, p_max_tries, NULL, '', '', left(p_key, 64), p_now, p_now)
    RETURNING id INTO v_job;
    INSERT INTO evaluation_outbox (job_id, queue, task_name, available_at, created_at, publish_attempts, last_error)
    VALUES (v_job, p_queue, p_task_name, p_now, p_now, 0, '')
    RETURNING id INTO v_outbox;
    -- The same bytes as render_body() in attempts/services/idempotency.py (a test checks it).
    v_body := convert_to(
        '{"attempt_id":' || a.id || ',"submission_id":' || v_submission
        || ',"status":"queued","version":' || (a.version + 1) || '}', 'UTF8');
    UPDATE attempts_idempotencyrecord SET status_code = 202, response_body = v_body WHERE id = v_record;
    outcome := 'created';
    evaluator := v_evaluator;
    attempt_id := a.id;
    submission_id := v_submission;
    attempt_version := a.version + 1;
    outbox_id := v_outbox;
    status_code := 202;
    stored_fingerprint := p_fingerprint;
    body := v_body;
    RETURN NEXT;
END;
$$;
"""
DROP = """
DROP FUNCTION IF EXISTS attempts_submission_create_fresh(
    bigint, bigint, text, text, text, timestamptz, timestamptz, integer, text, text);
"""


class Migration(migrations.Migration):
    dependencies = [("attempts", "0001_initial"), ("evaluation", "0001_initial")]

    operations = [migrations.RunSQL(SQL, DROP)]
