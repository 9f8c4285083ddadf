-- cost_by_step: what each turn costs as an episode goes on, per run, and the cumulative cost
-- of reaching a turn (the sum of the mean cost of every turn up to it). A turn's cost is the
-- sum of its priced calls (llm_call_costs, computed once by the pipeline); the mean is over
-- the episodes that reached the turn with every call of it priced. When prompts carry the
-- history, a turn costs more the later it comes and the cumulative cost grows quadratically
-- with the turn index (OSWorld-Human: "cost grows quadratically with steps").
-- `growth` says which: the turns with at least 5 episodes (in_fit) are fitted, a line and a
-- quadratic to the cumulative cost (r2_linear, r2_quadratic: ordinary least squares with an
-- intercept), and a line to the per-turn cost. Cumulative sums have correlated residuals,
-- which make any curve look significant, so the verdict rests on the per-turn cost: growth is
-- 'quadratic' when it rises with the turn (positive slope) and the turn explains at least
-- half its variance (step_cost_r2 >= 0.5), and the quadratic fits the cumulative cost better;
-- 'linear' otherwise; 'too few turns' under 5 fitted points.
-- Reads: llm_call_costs, runs.
CREATE OR REPLACE VIEW cost_by_step AS
WITH
turn_cost AS (
    SELECT
        run_id, domain, task_id, step_num                 AS turn,
        sum(cost_usd)                                     AS cost_usd,
        count(*) - count(cost_usd)                        AS n_unpriced
    FROM llm_call_costs
    WHERE step_num IS NOT NULL
    GROUP BY run_id, domain, task_id, step_num
),
per_turn AS (
    SELECT
        run_id,
        turn,
        count(*) FILTER (WHERE n_unpriced = 0)           AS n_episodes,
        count(*) FILTER (WHERE n_unpriced > 0)           AS n_episodes_unpriced,
        avg(cost_usd) FILTER (WHERE n_unpriced = 0)      AS mean_step_cost_usd
    FROM turn_cost
    GROUP BY run_id, turn
),
cumulative AS (
    SELECT
        *,
        sum(mean_step_cost_usd) OVER (PARTITION BY run_id ORDER BY turn) AS cumulative_cost_usd,
        n_episodes >= 5                                   AS in_fit
    FROM per_turn
    WHERE n_episodes > 0
),
fit AS (
    SELECT
        run_id,
        count(*)                                          AS n_fit_points,
        regr_r2(cumulative_cost_usd, turn)                AS r2_linear,
        corr(cumulative_cost_usd, turn)                   AS r_yk,
        corr(cumulative_cost_usd, turn * turn)            AS r_yq,
        corr(turn, turn * turn)                           AS r_kq,
        regr_slope(mean_step_cost_usd, turn)              AS step_cost_slope_usd,
        regr_r2(mean_step_cost_usd, turn)                 AS step_cost_r2
    FROM cumulative
    WHERE in_fit
    GROUP BY run_id
),
verdict AS (
    SELECT
        run_id,
        n_fit_points,
        r2_linear,
        (r_yk * r_yk + r_yq * r_yq - 2 * r_yk * r_yq * r_kq) / nullif(1 - r_kq * r_kq, 0)
                                                          AS r2_quadratic,
        step_cost_slope_usd,
        step_cost_r2
    FROM fit
),
final AS (
    SELECT
        r.agent,
        r.benchmark,
        c.run_id,
        CAST(c.turn AS INTEGER)                           AS turn,
        c.n_episodes,
        c.n_episodes_unpriced,
        c.mean_step_cost_usd,
        c.cumulative_cost_usd,
        c.in_fit,
        v.n_fit_points,
        v.r2_linear,
        v.r2_quadratic,
        v.step_cost_slope_usd,
        v.step_cost_r2,
        CASE
            WHEN coalesce(v.n_fit_points, 0) < 5 THEN 'too few turns'
            WHEN v.step_cost_slope_usd > 0 AND v.step_cost_r2 >= 0.5
                 AND v.r2_quadratic > v.r2_linear THEN 'quadratic'
            ELSE 'linear'
        END                                               AS growth
    FROM cumulative AS c
    JOIN runs AS r USING (run_id)
    LEFT JOIN verdict AS v USING (run_id)
)
SELECT * FROM final
ORDER BY agent, benchmark, run_id, turn;
