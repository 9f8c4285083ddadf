-- per_domain_units: the units per_domain's rates sum over, one row per unit, for resampling
-- them (`leaderboard --by domain|app --ci`). over 'run': each episode score of the domain
-- (success_rate_run = sum(num_reward) / sum(den)); over 'human': each of the domain's human
-- tasks, its scored episodes' reward and WES+ summed (0 when it was not run), and a scored
-- episode of a task that is not one of them with den 0, so that sum(num) / sum(den) is
-- per_domain's success_rate_human and wes_plus_single wherever those are not null.
-- Reads: episode_scores, human_refs.
CREATE OR REPLACE VIEW per_domain_units AS
WITH
domains AS (
    SELECT DISTINCT run_id, benchmark, human_version, max_steps_scoring, compat, domain
    FROM episode_scores
),
human_tasks AS (
    SELECT d.*, h.task_id
    FROM domains AS d
    JOIN human_refs AS h USING (human_version, domain)
),
scored_tasks AS (
    SELECT
        run_id, benchmark, human_version, max_steps_scoring, compat, domain, task_id,
        sum(reward)          AS reward,
        sum(wes_plus_single) AS wes_plus_single
    FROM episode_scores
    WHERE scored
    GROUP BY ALL
),
final AS (
    SELECT
        run_id, benchmark, human_version, max_steps_scoring, compat, domain, task_id,
        'run'                                    AS over,
        coalesce(reward, 0)                      AS num_reward,
        NULL::DOUBLE                             AS num_wes_plus_single,
        CASE WHEN reward IS NULL THEN 0 ELSE 1 END AS den
    FROM episode_scores
    UNION ALL
    SELECT
        run_id, benchmark, human_version, max_steps_scoring, compat, domain, task_id,
        'human',
        coalesce(s.reward, 0),
        coalesce(s.wes_plus_single, 0),
        CASE WHEN h.task_id IS NULL THEN 0 ELSE 1 END
    FROM human_tasks AS h
    FULL JOIN scored_tasks AS s
        USING (run_id, benchmark, human_version, max_steps_scoring, compat, domain, task_id)
)
SELECT * FROM final;
