-- cost_growth: one row per priced run: how its cost grows with the turn index (the fit and
-- the verdict of cost_by_step), the cost of reaching turns 10 and 50, and the last turn seen.
-- Reads: cost_by_step.
CREATE OR REPLACE VIEW cost_growth AS
SELECT
    agent,
    benchmark,
    run_id,
    any_value(growth)                                     AS growth,
    any_value(n_fit_points)                               AS n_fit_points,
    any_value(r2_linear)                                  AS r2_linear,
    any_value(r2_quadratic)                               AS r2_quadratic,
    any_value(step_cost_slope_usd)                        AS step_cost_slope_usd,
    any_value(step_cost_r2)                               AS step_cost_r2,
    max(cumulative_cost_usd) FILTER (WHERE turn = 10)     AS cost_to_turn_10_usd,
    max(cumulative_cost_usd) FILTER (WHERE turn = 50)     AS cost_to_turn_50_usd,
    max(turn)                                             AS last_turn
FROM cost_by_step
GROUP BY agent, benchmark, run_id
ORDER BY agent, benchmark, run_id;
