-- deskcraft_slices: each DeskCraft run's figures per slice of its tasks, per split and over
-- both (split 'all'), for every way the DeskCraft marts slice them (`slicing`): level_stem
-- and level_difficulty (the two level sources), app, domain (the DeskCraft domain, the
-- task's category), mode (collaboration mode; null for standard tasks) and trigger (the kind
-- of a phase trigger, e.g. agent_done of 'agent_done' or step_count of 'step_count:5'). The
-- slices of one slicing and split add up to the run, except triggers: a task counts once
-- under each kind its phases use, and its n_phases are the phases of that kind.
-- Strict success (score 1) and mean score (partial credit counted) are kept apart; both
-- are over the episodes with a usable result (n_tasks_run), as success_rate_run. The other
-- figures are for the marts that show them: the slice's DeskCraft domain (the first by name when
-- it spans several), apps, median steps of the solved episodes, mean steps, questions asked,
-- user turns and phases.
-- Which episodes are in which slice: deskcraft_slice_members.
-- Reads: deskcraft_slice_members.
CREATE OR REPLACE VIEW deskcraft_slices AS
WITH
sliced AS (
    SELECT * FROM deskcraft_slice_members
),
grouped AS (
    SELECT
        agent,
        benchmark,
        run_id,
        slicing,
        slice,
        CASE WHEN grouping(split) = 1 THEN 'all' ELSE split END AS split,
        count(*)                                          AS n_episodes,
        count(reward)                                     AS n_tasks_run,
        count(*) FILTER (WHERE solved)                    AS n_strict_success,
        coalesce(sum(reward), 0)                          AS sum_reward,
        min(category)                                     AS category,
        count(DISTINCT app)                               AS n_apps,
        median(n_steps) FILTER (WHERE solved)             AS median_steps_solved,
        avg(n_steps)                                      AS mean_steps,
        CAST(sum(n_questions) AS BIGINT)                  AS n_questions,
        CAST(sum(n_user_turns) AS BIGINT)                 AS n_user_turns,
        CAST(sum(n_phases) AS BIGINT)                     AS n_phases
    FROM sliced
    GROUP BY GROUPING SETS (
        (agent, benchmark, run_id, slicing, slice, split),
        (agent, benchmark, run_id, slicing, slice)
    )
),
final AS (
    SELECT
        *,
        100.0 * n_strict_success / nullif(n_tasks_run, 0) AS strict_success_pct,
        100.0 * sum_reward / nullif(n_tasks_run, 0)       AS mean_score_pct
    FROM grouped
)
SELECT * FROM final;
