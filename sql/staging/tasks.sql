-- The task index: one row per task of a benchmark data version (OSWorld-Human files embed the OSWorld configs).
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW tasks AS
SELECT
    CAST(benchmark AS VARCHAR)       AS benchmark,
    CAST(data_version AS VARCHAR)    AS data_version,
    CAST(domain AS VARCHAR)          AS domain,
    CAST(task_id AS VARCHAR)         AS task_id,
    CAST(instruction AS VARCHAR)     AS instruction,
    CAST(related_apps AS VARCHAR[])    AS related_apps,
    CAST(snapshot AS VARCHAR)        AS snapshot,
    CAST(evaluator_funcs AS VARCHAR[]) AS evaluator_funcs,
    CAST(conj AS VARCHAR)            AS conj,
    CAST(infeasible AS BOOLEAN)      AS infeasible,
    CAST(source AS VARCHAR)          AS source,
    CAST(source_file AS VARCHAR)     AS source_file,
    CAST(category AS VARCHAR)        AS category,
    CAST(split AS VARCHAR)           AS split,
    CAST(level_stem AS VARCHAR)      AS level_stem,
    CAST(level_difficulty AS VARCHAR) AS level_difficulty,
    CAST(mode AS VARCHAR)            AS mode,
    CAST(scenario_type AS VARCHAR)   AS scenario_type,
    CAST(n_phases AS INTEGER)        AS n_phases,
    CAST(triggers AS VARCHAR[])      AS triggers,
    CAST(n_evaluators AS INTEGER)    AS n_evaluators,
    CAST(n_rule_atoms AS INTEGER)    AS n_rule_atoms
FROM raw_tasks;
