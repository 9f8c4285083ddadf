"""Declarations of every warehouse table.

Types are short names resolved by `deskscore.schemas.validate`: string, json (a string that
holds JSON), bool, int32, int64, float64, timestamp (microseconds, UTC), list<string>,
list<list<string>>. Every field is nullable unless `required` is set: a column that one
archive format lacks stays null, it is never invented.
"""

from __future__ import annotations

from typing import NamedTuple

SCHEMA_VERSION = 1
"""Bumped whenever a table gains, loses or retypes a column; written into every file."""


class Field(NamedTuple):
    name: str
    type: str
    doc: str
    required: bool = False


class Table(NamedTuple):
    name: str
    doc: str
    key: tuple[str, ...]
    partition: tuple[str, ...]
    fields: tuple[Field, ...]

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.fields]


def _t(
    name: str, doc: str, key: tuple[str, ...], partition: tuple[str, ...], *fields: Field
) -> Table:
    return Table(name, doc, key, partition, tuple(fields))


RUN_ID = Field(
    "run_id",
    "string",
    "Deterministic id of the run: a hash of the source URL and the run's path inside it.",
    True,
)
BENCHMARK = Field(
    "benchmark",
    "string",
    "Benchmark family the run belongs to, e.g. osworld, osworld-verified, deskcraft.",
    True,
)
DOMAIN = Field(
    "domain",
    "string",
    "Application domain folder of the task (chrome, gimp, ..., multi_apps), or the first layout level.",
    True,
)
TASK_ID = Field(
    "task_id",
    "string",
    "Task id, canonical: old thunderbird ids are mapped to the current ones (see source_task_id).",
    True,
)
HUMAN_VERSION = Field(
    "human_version",
    "string",
    "OSWorld-Human data version the figures were computed against: 2025-06 or verified.",
    True,
)

RUNS = _t(
    "runs",
    "One row per agent run: the folder (or archive prefix) that holds one agent's task folders.",
    ("run_id",),
    ("benchmark", "run_id"),
    RUN_ID,
    BENCHMARK,
    Field(
        "source",
        "string",
        "The source as given to ingest, normalised (absolute path or fsspec URL).",
        True,
    ),
    Field(
        "run_path",
        "string",
        "Path of the run root inside the source ('' when the source is the run root).",
        True,
    ),
    Field("format", "string", "Reader that produced the run: osworld or uitars.", True),
    Field(
        "action_space",
        "string",
        "pyautogui, computer_13, claude_computer_use, ...: from args.json or the folder level.",
    ),
    Field(
        "observation_type",
        "string",
        "screenshot, a11y_tree, screenshot_a11y_tree or som: from args.json or the folder level.",
    ),
    Field("model", "string", "Model name from args.json or the folder levels (may contain '/')."),
    Field(
        "agent",
        "string",
        "Display name for tables: the model, else the run path, else the source's name.",
        True,
    ),
    Field(
        "max_steps",
        "int32",
        "The runner's step budget (model turns) from args.json, when archived.",
    ),
    Field("args_json", "json", "args.json verbatim, when present and parseable."),
    Field("n_task_folders", "int32", "Task folders found under the run root.", True),
    Field(
        "summary_source",
        "string",
        "Which archived summary was read, if any: summary/results.json or all_result.json.",
    ),
    Field(
        "fingerprint",
        "string",
        "Content fingerprint of the members read for this run, for incremental re-ingest.",
    ),
)

TASKS = _t(
    "tasks",
    "The task index: one row per task of a benchmark data version (OSWorld-Human files embed the OSWorld configs).",
    ("benchmark", "data_version", "domain", "task_id"),
    ("benchmark", "data_version"),
    BENCHMARK,
    Field(
        "data_version",
        "string",
        "Version of the task data, e.g. 2025-06 or verified for OSWorld-Human.",
        True,
    ),
    DOMAIN,
    TASK_ID,
    Field("instruction", "string", "The task instruction given to the agent."),
    Field("related_apps", "list<string>", "Applications the task config names."),
    Field("snapshot", "string", "VM snapshot the task starts from."),
    Field("evaluator_funcs", "list<string>", "Evaluator metric function names, in config order."),
    Field("conj", "string", "How several metrics combine: and (default) or or."),
    Field(
        "infeasible",
        "bool",
        "True when the evaluator is 'infeasible': success means the agent said FAIL.",
        True,
    ),
    Field("source", "string", "Where the row came from: osworld-human, deskcraft, ...", True),
    Field("source_file", "string", "File the row was read from, relative to the data root."),
)

HUMAN_REFS = _t(
    "human_refs",
    "Human reference trajectories (OSWorld-Human): step counts t_human per task and granularity.",
    ("human_version", "domain", "task_id"),
    ("human_version",),
    HUMAN_VERSION,
    DOMAIN,
    TASK_ID,
    Field(
        "alias_task_id",
        "string",
        "The task's id before OSWorld's 2025-02-10 thunderbird renumbering, if it had one.",
    ),
    Field(
        "single_steps",
        "int32",
        "t_human at single-action granularity: number of single actions.",
        True,
    ),
    Field(
        "grouped_steps",
        "int32",
        "t_human at grouped-action granularity: number of action groups.",
        True,
    ),
    Field("single_actions", "list<string>", "The human's single actions, verbatim."),
    Field("grouped_actions", "list<list<string>>", "The human's action groups, verbatim."),
)

EPISODES = _t(
    "episodes",
    "One row per run x task folder: what the archive says about the attempt, before any scoring.",
    ("run_id", "domain", "task_id"),
    ("benchmark", "run_id"),
    RUN_ID,
    BENCHMARK,
    DOMAIN,
    TASK_ID,
    Field(
        "source_task_id",
        "string",
        "Task id as the folder names it (an old thunderbird id stays visible here).",
        True,
    ),
    Field("task_path", "string", "Task folder path inside the source.", True),
    Field(
        "instruction",
        "string",
        "Instruction, when the archive carries it (UI-TARS meta.json, Agent S instruction.txt).",
    ),
    Field(
        "traj_file",
        "string",
        "Trajectory file read (traj.jsonl; the last *.jsonl otherwise; data.json for UI-TARS).",
    ),
    Field(
        "n_lines",
        "int32",
        "Physical lines of the trajectory file, counted as Python's text iteration does (OSWorld-Human's t_agent).",
        True,
    ),
    Field(
        "n_steps",
        "int32",
        "Executed actions: step rows whose kind is not 'error' (deskscore's t_agent).",
        True,
    ),
    Field(
        "n_turns", "int32", "Distinct model turns (step_num values) among executed actions.", True
    ),
    Field("n_error_lines", "int32", 'Runner error lines ({"Error": ...}) in the trajectory.', True),
    Field(
        "n_quarantined",
        "int32",
        "Trajectory lines that went to quarantine (blank, truncated, not an object, ...).",
        True,
    ),
    Field("result_raw", "string", "First line of result.txt, stripped, verbatim."),
    Field("result_status", "string", "ok, missing (no result.txt), empty, or unparseable.", True),
    Field(
        "score",
        "float64",
        "Archived reward: result.txt as float, True -> 1.0, False -> 0.0; null unless result_status is ok.",
    ),
    Field(
        "last_action_kind", "string", "Kind of the last executed action (done, fail, click, ...)."
    ),
    Field(
        "ended_by",
        "string",
        "done, fail, error (last line an error), or none (stopped without a terminal action).",
        True,
    ),
    Field("started_at", "timestamp", "Timestamp of the first action."),
    Field("ended_at", "timestamp", "Timestamp of the last action."),
    Field(
        "reported_score",
        "float64",
        "Score the runner's own summary (summary/results.json or all_result.json) gives, if any.",
    ),
    Field("reported_status", "string", "Status from summary/results.json, if any."),
    Field(
        "err_message",
        "string",
        'Error message from summary/results.json or the last {"Error": ...} line.',
    ),
)

STEPS = _t(
    "steps",
    "One row per trajectory record: every executed action, plus runner error lines as kind 'error'.",
    ("run_id", "domain", "task_id", "step_idx"),
    ("benchmark", "run_id"),
    RUN_ID,
    BENCHMARK,
    DOMAIN,
    TASK_ID,
    Field(
        "step_idx",
        "int32",
        "0-based index of the record among the episode's step rows, in file order.",
        True,
    ),
    Field("line_no", "int32", "1-based line number in the trajectory file.", True),
    Field(
        "step_num",
        "int32",
        "The runner's step_num: the model turn. Several actions of one turn share it.",
    ),
    Field(
        "action_text",
        "string",
        "The action as text: pyautogui code, WAIT/DONE/FAIL, or the command of a dict action.",
    ),
    Field(
        "action_format",
        "string",
        "Shape of the archived action: code, special, claude, operator, computer_13, dict, none.",
        True,
    ),
    Field(
        "action_kind",
        "string",
        "Parsed kind: click, double_click, right_click, triple_click, move, drag, mouse_down, mouse_up, type, hotkey, press, key_down, key_up, scroll, wait, done, fail, bash, screenshot, call_user, error, other.",
        True,
    ),
    Field("x", "float64", "Pointer x coordinate of the action, where it names one."),
    Field("y", "float64", "Pointer y coordinate of the action, where it names one."),
    Field("text", "string", "Text typed or keys pressed, where the action carries them."),
    Field(
        "response",
        "string",
        "Raw model text of the turn (response, or a dict action's raw_response).",
    ),
    Field(
        "screenshot_file",
        "string",
        "Screenshot taken after the action, as the record names it (relative to the task folder).",
    ),
    Field(
        "screenshot_path",
        "string",
        "The screenshot's path inside the source, when the file exists there.",
    ),
    Field(
        "action_timestamp",
        "string",
        "The runner's action_timestamp, verbatim (%Y%m%d@%H%M%S, maybe with %f).",
    ),
    Field("ts", "timestamp", "action_timestamp parsed (naive runner time, stored as UTC)."),
    Field("reward", "float64", "The record's reward (0 in OSWorld runners)."),
    Field("done", "bool", "The record's done flag."),
    Field(
        "info_json",
        "json",
        'The record\'s info object verbatim ({}, {"done": true}, {"fail": true}, ...).',
    ),
    Field("phase", "int32", "Interaction phase (DeskCraft interactive runs)."),
    Field("extra", "json", "Every other key of the record, verbatim: nothing is dropped."),
)

QUARANTINE = _t(
    "quarantine",
    "Inputs that could not become rows, with why: nothing is dropped silently.",
    ("source", "location", "line_no", "reason"),
    ("benchmark", "run_id"),
    Field(
        "run_id",
        "string",
        "Run the item belongs to, or a source-level id when it belongs to no run.",
        True,
    ),
    BENCHMARK,
    Field("source", "string", "The source as given to ingest.", True),
    Field("location", "string", "File path inside the source.", True),
    Field("line_no", "int32", "1-based line number, for line-oriented files."),
    Field(
        "reason",
        "string",
        "Short machine-readable reason: invalid_json, blank_line, not_an_object, not_utf8, unparseable_result, ...",
        True,
    ),
    Field("message", "string", "What happened and what to do, for people.", True),
    Field("excerpt", "string", "The first bytes of the offending input (at most 200 characters)."),
)

EPISODE_SCORES = _t(
    "episode_scores",
    "Per-episode figures against one human data version and step budget S.",
    ("run_id", "domain", "task_id", "human_version", "max_steps_scoring"),
    ("benchmark", "run_id"),
    RUN_ID,
    BENCHMARK,
    DOMAIN,
    TASK_ID,
    HUMAN_VERSION,
    Field("max_steps_scoring", "int32", "The --max-steps-scoring asked for.", True),
    Field("step_budget", "int32", "S = max(max_steps_scoring, the run's largest t_agent).", True),
    Field(
        "has_human_ref",
        "bool",
        "Whether the task has a human reference in this data version.",
        True,
    ),
    Field(
        "scored",
        "bool",
        "Whether the episode counts: it has a usable result and a human reference.",
        True,
    ),
    Field("reward", "float64", "r: the archived score used for scoring."),
    Field("success", "bool", "Strict success: r == 1."),
    Field(
        "t_agent",
        "int32",
        "Agent steps used for WES (executed actions; see --compat for the original's line count).",
    ),
    Field("t_human_single", "int32", "Human single-action steps."),
    Field("t_human_grouped", "int32", "Human grouped-action steps."),
    Field("step_ratio_single", "float64", "t_agent / t_human_single."),
    Field("step_ratio_grouped", "float64", "t_agent / t_human_grouped."),
    Field("wes_plus_single", "float64", "r * t_human_single / t_agent (0 when t_agent is 0)."),
    Field("wes_plus_grouped", "float64", "r * t_human_grouped / t_agent (0 when t_agent is 0)."),
    Field("wes_minus", "float64", "-(1 - r) * t_agent / S."),
    Field(
        "wes_single",
        "float64",
        "Combined WES, second form: wes_plus_single * (1 - mean_t_fail / S), the run's factor.",
    ),
    Field("wes_grouped", "float64", "Combined WES, second form, grouped granularity."),
    Field("compat", "string", "Scoring rules: deskscore (default) or osworld-human.", True),
)

RUN_SCORES = _t(
    "run_scores",
    "Per-run figures against one human data version and step budget.",
    ("run_id", "human_version", "max_steps_scoring", "compat"),
    ("benchmark", "run_id"),
    RUN_ID,
    BENCHMARK,
    HUMAN_VERSION,
    Field("max_steps_scoring", "int32", "The --max-steps-scoring asked for.", True),
    Field("step_budget", "int32", "S = max(max_steps_scoring, the run's largest t_agent).", True),
    Field("compat", "string", "Scoring rules: deskscore (default) or osworld-human.", True),
    Field(
        "n_human_tasks",
        "int32",
        "N: tasks in the human data version (OSWorld-Human's denominator).",
        True,
    ),
    Field(
        "n_tasks_run",
        "int32",
        "Episodes with a usable result (show_result.py's denominator).",
        True,
    ),
    Field(
        "n_tasks_matched", "int32", "Episodes with a usable result that match a human task.", True
    ),
    Field(
        "success_rate_run",
        "float64",
        "sum(r) / n_tasks_run, as OSWorld's show_result.py (null when nothing ran).",
    ),
    Field(
        "success_rate_human",
        "float64",
        "sum(r over matched) / N, as OSWorld-Human's 'Original OSWorld Result'.",
    ),
    Field("strict_success_rate_run", "float64", "Share of run tasks with r == 1."),
    Field("wes_plus_single", "float64", "Mean single-action WES+ over N."),
    Field("wes_plus_grouped", "float64", "Mean grouped-action WES+ over N."),
    Field("wes_minus", "float64", "Mean WES- over N."),
    Field(
        "mean_t_fail",
        "float64",
        "Failure-weighted mean t_agent of failed tasks: sum((1-r) t) / sum(1-r).",
    ),
    Field("wes_single", "float64", "Combined WES (second form), single-action."),
    Field("wes_grouped", "float64", "Combined WES (second form), grouped-action."),
    Field(
        "mean_step_ratio_single",
        "float64",
        "Mean t_agent / t_human_single over successful matched tasks.",
    ),
    Field(
        "mean_step_ratio_grouped",
        "float64",
        "Mean t_agent / t_human_grouped over successful matched tasks.",
    ),
)

SCREENSHOTS = _t(
    "screenshots",
    "One row per distinct screenshot content: decoded once, whatever how many steps, runs or re-runs show it.",
    ("content_hash",),
    ("benchmark", "run_id"),
    Field(
        "content_hash",
        "string",
        "SHA-256 of the file's bytes, hex: the key, and an exact-equality check phash cannot make (it misses cursor-sized changes).",
        True,
    ),
    Field("run_id", "string", "Run in which this content was first hashed (its partition).", True),
    BENCHMARK,
    Field(
        "phash",
        "int64",
        "imagehash's 64-bit perceptual hash (phash, hash_size 8) as a signed 64-bit integer, so SQL can XOR it and bit_count the result.",
    ),
    Field("width", "int32", "Width in pixels."),
    Field("height", "int32", "Height in pixels."),
    Field("n_bytes", "int64", "Size of the file in bytes.", True),
    Field(
        "format",
        "string",
        "Image format as Pillow reads it (PNG, JPEG, ...), whatever the file's extension says.",
    ),
    Field(
        "status",
        "string",
        "ok, or why it has no phash: corrupt, truncated, too_large (decompression bomb), not_an_image.",
        True,
    ),
)

SCREENSHOT_REFS = _t(
    "screenshot_refs",
    "Which screenshot file each step points to, and its content hash: the join between steps and screenshots.",
    ("run_id", "domain", "task_id", "step_idx"),
    ("benchmark", "run_id"),
    RUN_ID,
    BENCHMARK,
    DOMAIN,
    TASK_ID,
    Field("step_idx", "int32", "The step (see steps.step_idx).", True),
    Field("screenshot_path", "string", "The file's path inside the run's source.", True),
    Field(
        "content_hash",
        "string",
        "SHA-256 of the file's bytes; null when the file could not be read (see quarantine).",
    ),
)

LOOP_SPANS = _t(
    "loop_spans",
    "Runs of consecutive steps in which the agent repeats itself (OSWorld-Human's loop signals).",
    ("run_id", "domain", "task_id", "first_step"),
    ("benchmark", "run_id"),
    RUN_ID,
    BENCHMARK,
    DOMAIN,
    TASK_ID,
    Field(
        "first_step",
        "int32",
        "step_idx of the span's first step (the one the first looping step repeats).",
        True,
    ),
    Field("last_step", "int32", "step_idx of the span's last looping step.", True),
    Field("length", "int32", "Steps in the span, first and last included.", True),
    Field("looping_steps", "int32", "Steps of the span flagged as looping (length - 1).", True),
    Field(
        "signals",
        "list<string>",
        "Signals that fired on at least one step of the span: response, action, coords, phash.",
    ),
    Field(
        "signal_counts_json",
        "json",
        "How many of the span's looping steps each signal fired on, as a JSON object.",
    ),
    Field(
        "outcome",
        "string",
        "recovered (the agent left the loop and went on), abandoned (the episode ended with DONE/FAIL or stopped within the span), or step_limit (the step budget ran out inside it).",
        True,
    ),
    Field(
        "detector_version",
        "string",
        "Version and parameters of the loop detector that found the span.",
        True,
    ),
)

TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        RUNS,
        TASKS,
        HUMAN_REFS,
        EPISODES,
        STEPS,
        QUARANTINE,
        EPISODE_SCORES,
        RUN_SCORES,
        SCREENSHOTS,
        SCREENSHOT_REFS,
        LOOP_SPANS,
    )
}
