-- Inputs that could not become rows, with why: nothing is dropped silently.
-- Staging: rename and cast only; one row per row of the Parquet files. A row may stand for
-- several consecutive lines of a file (line_no to line_end, n_lines of them): count
-- quarantined items with sum(coalesce(n_lines, 1)), not count(*).
CREATE OR REPLACE VIEW quarantine AS
SELECT
    CAST(run_id AS VARCHAR)    AS run_id,
    CAST(benchmark AS VARCHAR) AS benchmark,
    CAST(source AS VARCHAR)    AS source,
    CAST(location AS VARCHAR)  AS location,
    CAST(line_no AS INTEGER)   AS line_no,
    CAST(line_end AS INTEGER)  AS line_end,
    CAST(n_lines AS INTEGER)   AS n_lines,
    CAST(reason AS VARCHAR)    AS reason,
    CAST(message AS VARCHAR)   AS message,
    CAST(excerpt AS VARCHAR)   AS excerpt
FROM raw_quarantine;
