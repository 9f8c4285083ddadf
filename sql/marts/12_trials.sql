-- trials: one row per run group (the runs that are trials of one configuration) and scoring
-- configuration, best pass@1 first: how many trials and tasks, the mean reward, pass@1, and
-- pass@k and pass^k at k = the group's trial count (trial_scores holds every k from 1). A run
-- without trials is a group of one: its pass@1 is its success rate over the tasks it ran.
-- Figures are computed once, by the pipeline (deskscore.scorers.trials); this only picks k
-- and ranks. `deskscore leaderboard --trials` prints it.
-- Reads: runs, trial_scores.
CREATE OR REPLACE VIEW trials AS
WITH
group_facts AS (
    SELECT
        coalesce(run_group, run_id)                   AS run_group,
        benchmark,
        string_agg(DISTINCT agent, ', ' ORDER BY agent) AS agent,
        count(*)                                      AS n_runs
    FROM runs
    GROUP BY ALL
),
at_one AS (
    SELECT run_group, benchmark, human_version, max_steps_scoring, compat, pass_at_k AS pass_at_1
    FROM trial_scores
    WHERE k = 1
),
at_all AS (
    SELECT *
    FROM trial_scores
    WHERE k = n_trials
),
final AS (
    SELECT
        rank() OVER (
            PARTITION BY a.benchmark, a.human_version, a.max_steps_scoring, a.compat
            ORDER BY o.pass_at_1 DESC NULLS LAST
        )                  AS rank,
        g.agent,
        a.benchmark,
        a.run_group,
        a.human_version,
        a.max_steps_scoring,
        a.compat,
        a.n_trials,
        g.n_runs,
        a.n_tasks,
        a.mean_reward,
        o.pass_at_1,
        a.k,
        a.n_tasks_k,
        a.pass_at_k,
        a.pass_hat_k,
        a.trials,
        a.run_ids
    FROM at_all AS a
    JOIN at_one AS o USING (run_group, benchmark, human_version, max_steps_scoring, compat)
    LEFT JOIN group_facts AS g USING (run_group, benchmark)
)
SELECT * FROM final
ORDER BY benchmark, human_version, max_steps_scoring, compat, rank, agent, run_group;
