-- verdict_disagreements: every episode where a recomputed or judged verdict contradicts
-- result.txt, beside the archived score and how the episode ended, so each can be looked at.
-- Reads: verdicts, episodes, runs.
CREATE OR REPLACE VIEW verdict_disagreements AS
WITH
archived AS (
    SELECT run_id, domain, task_id, score AS archived_score
    FROM verdicts
    WHERE source = 'archived'
),
disagreeing AS (
    SELECT *
    FROM verdicts
    WHERE agrees_with_archived = false
),
final AS (
    SELECT
        r.agent,
        d.benchmark,
        d.run_id,
        d.domain,
        d.task_id,
        d.source,
        d.rule,
        a.archived_score,
        d.score,
        d.passed,
        e.last_action_kind,
        e.ended_by,
        d.details,
        e.task_path
    FROM disagreeing AS d
    LEFT JOIN archived AS a USING (run_id, domain, task_id)
    LEFT JOIN episodes AS e USING (run_id, domain, task_id)
    LEFT JOIN runs AS r USING (run_id)
)
SELECT * FROM final
ORDER BY agent, run_id, domain, task_id, source, rule;
