-- run_labels: the name each run is shown by, told apart from the other runs of its name.
-- A run's name is its `ingest --run-name`, else its agent (runs.agent: --agent, else the
-- model, ...). Runs of one benchmark that share a name (three dated result folders of
-- gpt-4o, results1/ and results2/, two zips of one agent) get the part of their paths that
-- differs: each run's path is its source and run path, split at '/'; the levels all of them
-- share at the front and at the back are dropped (the back never eats into the front), and
-- what is left, joined by '/', is added in brackets: 'gpt-4o (20250130-1)'. A run whose
-- middle is empty keeps the bare name. Distinct paths have distinct middles; two runs whose
-- labels are still equal (one folder ingested through two sources, 'traces' and
-- 'traces/20250130-1'; an agent named like another's label) get the first 8 characters of
-- their run_id in square brackets. Labels depend only on the runs the warehouse holds (a run
-- added later may lengthen its namesakes' labels), never on the order of ingests, and the
-- run_id stays what it was (source and run path).
-- Reads: runs.
CREATE OR REPLACE VIEW run_labels AS
WITH
named AS (
    SELECT
        run_id,
        benchmark,
        coalesce(run_name, agent) AS name,
        string_split(
            rtrim(source, '/') || CASE WHEN run_path = '' THEN '' ELSE '/' || run_path END, '/'
        ) AS parts
    FROM runs
),
name_groups AS (
    SELECT benchmark, name, count(*) AS n_runs, min(len(parts)) AS min_levels
    FROM named
    GROUP BY ALL
),
levels AS (
    SELECT benchmark, name, unnest(range(1, min_levels + 1)) AS i
    FROM name_groups
    WHERE n_runs > 1
),
differs AS (
    -- per level i of a group: whether its runs differ at the i-th level from the front, and
    -- at the i-th from the back
    SELECT
        l.benchmark,
        l.name,
        l.i,
        count(DISTINCT n.parts[l.i]) > 1                  AS front_differs,
        count(DISTINCT n.parts[len(n.parts) + 1 - l.i]) > 1 AS back_differs
    FROM levels AS l
    JOIN named AS n USING (benchmark, name)
    GROUP BY ALL
),
shared AS (
    SELECT
        g.benchmark,
        g.name,
        g.n_runs,
        coalesce(min(d.i) FILTER (WHERE d.front_differs) - 1, g.min_levels) AS n_front,
        coalesce(min(d.i) FILTER (WHERE d.back_differs) - 1, g.min_levels)  AS n_back_all,
        g.min_levels
    FROM name_groups AS g
    LEFT JOIN differs AS d USING (benchmark, name)
    GROUP BY g.benchmark, g.name, g.n_runs, g.min_levels
),
middles AS (
    SELECT
        n.run_id,
        n.benchmark,
        n.name,
        s.n_runs,
        array_to_string(
            n.parts[s.n_front + 1 : len(n.parts) - least(s.n_back_all, s.min_levels - s.n_front)],
            '/'
        ) AS distinct_part
    FROM named AS n
    JOIN shared AS s USING (benchmark, name)
),
labelled AS (
    SELECT
        *,
        CASE
            WHEN n_runs = 1 OR distinct_part = '' THEN name
            ELSE name || ' (' || distinct_part || ')'
        END AS path_label
    FROM middles
),
final AS (
    SELECT
        run_id,
        CASE
            WHEN count(*) OVER (PARTITION BY benchmark, path_label) > 1
                THEN path_label || ' [' || left(run_id, 8) || ']'
            ELSE path_label
        END             AS label,
        name,
        distinct_part,
        n_runs          AS n_runs_named_alike
    FROM labelled
)
SELECT * FROM final;
