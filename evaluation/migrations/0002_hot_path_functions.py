from django.db import migrations

SQL = r"""
-- Frozen copy of the function as first installed; 0003 drops it.
CREATE OR REPLACE FUNCTION evaluation_job_claim_queued(
    p_job bigint, p_token uuid, p_worker text, p_now timestamptz
) RETURNS TABLE (
    outcome text,
    try_id bigint,
    tries bigint,
    max_tries bigint,
    job_created_at timestamptz,
    submission_id bigint,
    answer text,
    attempt_id bigint,
    attempt_user_id bigint,
    attempt_version bigint,
    attempt_created_at timestamptz,
    question_id bigint,
    question_slug text,
    question_kind text,
    question_prompt text,
    question_spec jsonb,
    question_evaluator text
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_attempt_id bigint;
    a attempts_attempt%ROWTYPE;
    j evaluation_evaluationjob%ROWTYPE;
    s attempts_submission%ROWTYPE;
    q attempts_question%ROWTYPE;
    v_actor text;
BEGIN
    SELECT sub.attempt_id INTO v_attempt_id
      FROM evaluation_evaluationjob job JOIN attempts_submission sub ON sub.id = job.submission_id
     WHERE job.id = p_job;
    IF v_attempt_id IS NULL THEN
        RETURN;  -- no row: another case, the general path's
    END IF;
    SELECT * INTO a FROM attempts_attempt WHERE id = v_attempt_id FOR UPDATE;
    SELECT * INTO j FROM evaluation_evaluationjob WHERE id = p_job FOR UPDATE;
    SELECT * INTO s FROM attempts_submission WHERE id = j.submission_id;
    IF j.kind <> 'evaluate' OR j.status NOT IN ('pending', 'queued') OR j.tries >= j.max_tries
       OR a.latest_submission_id IS DISTINCT FROM j.submission_id
       OR s.status <> 'queued' OR a.status <> 'queued' THEN
        RETURN;  -- no row: another case, the general path's
    END IF;
    -- A claim lost in a database crash is harmless: the job is claimable again, and the run's
    -- result write, which stays durable, is refused by the fence.
    PERFORM set_config('synchronous_commit', 'off', true);
    j.tries := j.tries + 1;
    UPDATE evaluation_evaluationjob
       SET status = 'running', tries = j.tries, lease_token = p_token, heartbeat_at = p_now,
           next_retry_at = NULL, started_at = COALESCE(started_at, p_now), updated_at = p_now
     WHERE id = p_job;
    INSERT INTO evaluation_jobtry (job_id, number, lease_token, worker, started_at, outcome, error)
    VALUES (p_job, j.tries, p_token, left(p_worker, 200), p_now, 'running', '')
    RETURNING id INTO try_id;
    UPDATE attempts_submission SET status = 'processing', updated_at = p_now WHERE id = s.id;
    UPDATE attempts_attempt SET status = 'processing', version = version + 1, updated_at = p_now
     WHERE id = a.id;
    v_actor := 'job:' || p_job || ':try:' || j.tries;
    INSERT INTO attempts_statechange (entity, object_id, from_status, to_status, actor, reason, created_at)
    VALUES ('submission', s.id, 'queued', 'processing', v_actor, '', p_now),
           ('attempt', a.id, 'queued', 'processing', v_actor, '', p_now);
    SELECT * INTO q FROM attempts_question WHERE id = a.question_id;
    outcome := 'claimed';
    tries := j.tries;
    max_tries := j.max_tries;
    job_created_at := j.created_at;
    submission_id := s.id;
    answer := s.answer;
    attempt_id := a.id;
    attempt_user_id := a.user_id;
    attempt_version := a.version + 1;
    attempt_created_at := a.created_at;
    question_id := q.id;
    question_slug := q.slug;
    question_kind := q.kind;
    question_prompt := q.prompt;
    question_spec := q.evaluation_spec;
    question_evaluator := q.evaluator;
    RETURN NEXT;
END;
$$;

CREATE OR REPLACE FUNCTION evaluation_job_record_result(
    p_job bigint, p_attempt bigint, p_submission bigint, p_token uuid, p_try bigint,
    p_score double precision, p_max_score double precision, p_feedback text, p_details jsonb,
    p_actor text, p_now timestamptz, p_duration_ms double precision
) RETURNS TABLE (outcome text, attempt_version bigint, attempt_updated_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    a attempts_attempt%ROWTYPE;
    j evaluation_evaluationjob%ROWTYPE;
    v_submission_status text;
    v_result bigint;
BEGIN
    SELECT * INTO a FROM attempts_attempt WHERE id = p_attempt FOR UPDATE;
    SELECT * INTO j FROM evaluation_evaluationjob WHERE id = p_job FOR UPDATE;
    SELECT status INTO v_submission_status FROM attempts_submission WHERE id = p_submission;
    -- The fence (this run's lease), the latest-submission check, and the one ordinary state.
    IF j.lease_token IS DISTINCT FROM p_token OR j.status <> 'running'
       OR a.latest_submission_id IS DISTINCT FROM p_submission
       OR a.status <> 'processing' OR v_submission_status IS DISTINCT FROM 'processing' THEN
        RETURN;
    END IF;
    INSERT INTO attempts_result (submission_id, score, max_score, feedback, details, created_at)
    VALUES (p_submission, p_score, p_max_score, p_feedback, p_details, p_now)
    ON CONFLICT (submission_id) DO NOTHING
    RETURNING id INTO v_result;
    IF v_result IS NULL THEN
        -- It has its result already: the general path says so and discards this run.
        RETURN;
    END IF;
    UPDATE attempts_submission SET status = 'completed', updated_at = p_now WHERE id = p_submission;
    UPDATE attempts_attempt
       SET status = 'completed', version = version + 1, scored_submission_id = p_submission, updated_at = p_now
     WHERE id = p_attempt;
    INSERT INTO attempts_statechange (entity, object_id, from_status, to_status, actor, reason, created_at)
    VALUES ('submission', p_submission, 'processing', 'completed', p_actor, '', p_now),
           ('attempt', p_attempt, 'processing', 'completed', p_actor, 'result of submission ' || p_submission, p_now);
    UPDATE evaluation_jobtry
       SET outcome = 'succeeded', finished_at = p_now, duration_ms = p_duration_ms, error = ''
     WHERE id = p_try;
    UPDATE evaluation_evaluationjob
       SET status = 'succeeded', lease_token = NULL, finished_at = p_now, discard_reason = '', updated_at = p_now
     WHERE id = p_job;
    outcome := 'recorded';
    attempt_version := a.version + 1;
    attempt_updated_at := p_now;
    RETURN NEXT;
END;
$$;
"""
DROP = """
DROP FUNCTION IF EXISTS evaluation_job_claim_queued(bigint, uuid, text, timestamptz);
DROP FUNCTION IF EXISTS evaluation_job_record_result(
    bigint, bigint, bigint, uuid, bigint, double precision, double precision, text, jsonb, text, timestamptz,
    double precision);
"""


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0001_initial")]

    operations = [migrations.RunSQL(SQL, DROP)]
