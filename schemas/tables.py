"""Declarations of every warehouse table.

Types are short names resolved by `deskscore.schemas.validate`: string, json (a string that
holds JSON), bool, int32, int64, float64, timestamp (microseconds, UTC), list<string>,
list<list<string>>. Every field is nullable unless `required` is set: a column that one
archive format lacks stays null, it is never invented. The metric columns of episode_scores
and run_scores come from the metric registry (see METRIC_COLUMNS).
"""

from __future__ import annotations

from typing import NamedTuple

SCHEMA_VERSION = 4
"""Bumped whenever a table gains, loses or retypes a column; written into every file."""

MAX_INT64 = 2**63 - 1
"""The largest value an int64 column holds: a count, or a sum of counts, beyond it is an
unknown value (null), never one wrapped around."""


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
    "Deterministic id of the run: a hash of the source URL and the run's path inside it (and "
    "of its trial, for trial folders below the task folders and epochs of an inspect_ai log).",
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
    Field(
        "format",
        "string",
        "Reader that produced the run: osworld, uitars, or deskcraft (OSWorld files plus "
        "interaction logs, task folders named by DeskCraft stems); live for a run recorded by "
        "`deskscore collect` (its source is the warehouse's screenshot store).",
        True,
    ),
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
        "Who ran: `ingest --agent` as given; else the model (args.json, else the "
        "<action_space>/<obs>/<model> levels); else the run's path inside the source; else the "
        "source's name (a folder name then stands in for an unknown agent: name it with --agent).",
        True,
    ),
    Field(
        "run_name",
        "string",
        "`ingest --run-name` as given; null when the run was not named. Tables show runs by the "
        "label the run_labels view derives from it (or from agent when null).",
    ),
    Field(
        "max_steps",
        "int32",
        "The runner's step budget (model turns) from args.json, when archived.",
    ),
    Field("args_json", "json", "args.json verbatim, when present and parseable."),
    Field("n_task_folders", "int32", "Task folders found under the run root.", True),
    Field(
        "layout",
        "string",
        "The `ingest --layout` the run's task folders were found with; null: default discovery. "
        "`check` re-counts the source with it.",
    ),
    Field(
        "summary_source",
        "string",
        "Which archived summary was read, if any: summary/results.json or all_result.json.",
    ),
    Field(
        "fingerprint",
        "string",
        "Listing fingerprint: sha1 over the path and size of every file under the run root.",
    ),
    Field(
        "source_stamp",
        "string",
        "What a listing said about the whole source when it was ingested (a zip's size and "
        "mtime, a folder's paths, sizes and mtimes, an object's ETag): ingest skips a source "
        "whose stamp is unchanged.",
    ),
    Field(
        "content_hash",
        "string",
        "sha1 over every member read for this run (path and sha1 of its bytes) and the ingest "
        "code's version: equal hashes mean equal tables, so neither ingest nor score redo them.",
    ),
    Field(
        "trial",
        "string",
        "Which trial of its configuration the run is, as the archive names it: the trial folder "
        "(<domain>/<task_id>/<trial>/ or <run root>/<trial>/<domain>/<task_id>/), the epoch of an "
        "inspect_ai log; for runs ingested with --trial-of, the source's name and the run's path "
        "in it (with #<trial> for trial folders). Null for a run that is not a trial. "
        "A label only: trial figures count runs (see trial_scores).",
    ),
    Field(
        "run_group",
        "string",
        "The configuration the run is a trial of; runs that share it are trials of one "
        "configuration (trial_scores). The run's own id for a run without trials; the id the "
        "trial-less run root would have for trial folders and the epochs of one inspect_ai log; "
        "the name given to `ingest --trial-of`. Null (read as the run itself) in runs recorded by "
        "`deskscore collect`.",
    ),
)

SOURCES = _t(
    "sources",
    "One row per source (archive, folder, URL) an ingest finished reading: what lets the next "
    "ingest skip it. Written once a whole ingest succeeded, so a killed ingest is redone.",
    ("source",),
    (),
    Field(
        "source", "string", "The source as recorded in runs.source (absolute path or URL).", True
    ),
    Field(
        "source_stamp",
        "string",
        "What a listing said about the source when it was read (see runs.source_stamp); null "
        "when it could not be listed, and then it is always read again.",
    ),
    BENCHMARK,
    Field("n_runs", "int32", "Runs found in it when it was read.", True),
    Field(
        "layout",
        "string",
        "The `--layout` it was read with (null: default discovery). Like benchmark, agent and "
        "run_name, it decides the rows: a source read again with another value is not unchanged.",
    ),
    Field("agent", "string", "The `--agent` it was read with (null: derived per run)."),
    Field("run_name", "string", "The `--run-name` it was read with (null: none)."),
)

SCORE_INPUTS = _t(
    "score_inputs",
    "One row per run and score configuration that a whole `deskscore score` finished: the "
    "digest of what its figures, verdicts, loops and costs were computed from, so the next "
    "score skips it when nothing changed. Written after the job succeeded, so a killed job "
    "is redone.",
    ("run_id", "human_version", "max_steps_scoring", "compat"),
    (),
    RUN_ID,
    BENCHMARK,
    HUMAN_VERSION,
    Field("max_steps_scoring", "int32", "The --max-steps-scoring asked for.", True),
    Field("compat", "string", "Scoring rules: deskscore (default) or osworld-human.", True),
    Field(
        "inputs_digest",
        "string",
        "sha1 over the run's content hash, the screenshot hash tables, the human data, the "
        "prices, the options and the scorers' version.",
        True,
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
    Field(
        "category",
        "string",
        "Group of apps the benchmark reports by. DeskCraft's domains: Office, Browser, "
        "Development, Creative Design, Multimedia & 3D, Multi-app (domain holds the app key, "
        "as run folders do, so tasks join episodes on it).",
    ),
    Field("split", "string", "DeskCraft split: standard or interactive."),
    Field(
        "level_stem",
        "string",
        "DeskCraft level L1/L2/L3 from the file stem prefix (null for INTERACTIVE_ stems). "
        "The sources disagree, so both are kept and each mart names the one it uses.",
    ),
    Field(
        "level_difficulty",
        "string",
        "DeskCraft level L1/L2/L3 from the task file's difficulty field (null when absent).",
    ),
    Field(
        "mode",
        "string",
        "Collaboration mode from scenario_type: clarification, requirement_change, "
        "progressive_refinement, interruption, correction, workflow (other for a type not "
        "in that map); null when the task has no scenario_type.",
    ),
    Field("scenario_type", "string", "The interactive task's scenario_type, verbatim."),
    Field("n_phases", "int32", "Phases of an interactive task (0 for standard tasks)."),
    Field(
        "triggers",
        "list<string>",
        "Each phase's trigger in phase order: agent_done, agent_asks, or step_count:<value>.",
    ),
    Field("n_evaluators", "int32", "Evaluator metric functions of the task."),
    Field(
        "n_rule_atoms",
        "int32",
        "Scalar checks in the evaluator's rules (defined in collectors/deskcraft_tasks.py).",
    ),
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
    Field(
        "result_status",
        "string",
        "ok, missing (no result.txt), empty, or unparseable; a collected episode (runs.format "
        "live) whose task has no evaluator deskscore implements is unevaluated (judge it later).",
        True,
    ),
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
    Field(
        "metric_scores_json",
        "json",
        "Per-metric evaluator scores a runner archived beside result.txt (eval_details.json), "
        'normalised to {"conj": "and"|"or"|null, "metrics": [{"func", "score"}, ...]}; null '
        "when none was archived. Lets the score pipeline recompute the conj rule offline.",
    ),
    Field(
        "total_time_s",
        "float64",
        "Seconds the episode took in all, as the log records it (inspect_ai's total_time); "
        "null for formats that do not record it.",
    ),
    Field(
        "working_time_s",
        "float64",
        "Seconds the episode spent working, waits for rate limits and sandboxes left out "
        "(inspect_ai's working_time); null for formats that do not record it.",
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
        "The step's kind: click, double_click, right_click, triple_click, move, drag, mouse_down, mouse_up, type, hotkey, press, key_down, key_up, scroll, wait, done, fail, bash, screenshot, call_user, multi, error, other. "
        "A code step of several calls (step_actions) takes the kind of its effective calls: "
        "moves, held keys and releases (move, key_down, key_up, mouse_up) only count when it "
        "has no other action, pauses (wait, screenshot) only when it has nothing else, other "
        "calls last; multi when the effective calls are actions of different kinds, else the "
        "first one's kind; keyDown/keyUp calls alone are the hotkey or press they spell.",
        True,
    ),
    Field(
        "x",
        "float64",
        "Pointer x coordinate of the action, where it names one (of several calls: the first "
        "call's that has literal coordinates).",
    ),
    Field("y", "float64", "Pointer y coordinate of the action, where it names one (as x)."),
    Field(
        "text",
        "string",
        "Text typed, keys pressed (joined with '+') or shell command, where the action carries "
        "them (of several calls: the first effective call's; each call's is in step_actions).",
    ),
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
    Field(
        "dt_s",
        "float64",
        "Seconds from the previous step row's ts to this one's, in the same episode: the model "
        "call(s) of a turn plus the previous action's execution and screenshot. Null for the "
        "first row and when either timestamp is missing.",
    ),
    Field(
        "screenshot_s",
        "float64",
        "Seconds the runner says taking the screenshot took, where it records it (else null).",
    ),
    Field(
        "action_s",
        "float64",
        "Seconds the runner says executing the action took, where it records it (else null).",
    ),
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

STEP_ACTIONS = _t(
    "step_actions",
    "One row per call of a step's action, in order: each pyautogui (or sleep, subprocess, "
    "other) call of a code string, read with Python's ast; a dict action or special word is "
    "one row. Runner error lines and steps without an action have none.",
    ("run_id", "domain", "task_id", "step_idx", "action_idx"),
    ("benchmark", "run_id"),
    RUN_ID,
    BENCHMARK,
    DOMAIN,
    TASK_ID,
    Field("step_idx", "int32", "The step row (steps.step_idx) the call belongs to.", True),
    Field(
        "action_idx", "int32", "0-based position of the call in the step, in source order.", True
    ),
    Field(
        "kind",
        "string",
        "The call's kind, from the steps vocabulary but multi and error: a pyautogui function's "
        "(click(button='right') is right_click, click(clicks=2) double_click), wait for "
        "time.sleep and pyautogui.sleep, bash for subprocess.run/call/check_call/check_output/"
        "Popen/getoutput/getstatusoutput, os.system and os.popen, other for any other call.",
        True,
    ),
    Field(
        "func",
        "string",
        "The function called, its module resolved through the script's imports "
        "(pyautogui.click for pg.click or a click imported from pyautogui; time.sleep; "
        "subprocess.run); a dict action's own name (Claude's input.action, Operator's type, "
        "computer_13's action_type); null for a special word.",
    ),
    Field(
        "x",
        "float64",
        "Literal absolute x of the call (x=, the first argument, or an (x, y) pair); null when "
        "computed (a variable, arithmetic) or relative (moveRel, dragRel).",
    ),
    Field("y", "float64", "Literal absolute y of the call, as x."),
    Field(
        "text",
        "string",
        "Text typed (write/typewrite; a list of single characters joined), keys pressed joined "
        "with '+', or the shell command (an argument list quoted as one shell line); null when "
        "not literal (a variable, an f-string with a placeholder).",
    ),
    Field(
        "keys",
        "list<string>",
        "The keys of hotkey, press, keyDown, keyUp (and of typewrite given a list), in order.",
    ),
    Field(
        "button",
        "string",
        "Mouse button the call names (button=, or the function: leftClick, rightClick, "
        "middleClick); null when it does not say.",
    ),
    Field(
        "clicks",
        "int32",
        "Clicks a click call makes: clicks= (default 1), 2 for doubleClick, 3 for tripleClick.",
    ),
    Field(
        "amount",
        "float64",
        "Scroll amount of scroll/hscroll/vscroll (pyautogui's clicks: positive up or right).",
    ),
    Field("seconds", "float64", "Seconds a sleep call pauses."),
    Field(
        "effective",
        "bool",
        "Whether the call is one of those the step's kind follows from (see steps.action_kind):"
        " false for a move, held key or release beside an action, a pause beside anything "
        "else, and any other call beside a known one.",
        True,
    ),
    Field(
        "parser",
        "string",
        "How the call was read: ast (Python code), regex (code Python cannot parse, such as a "
        "line cut off: scanned for pyautogui.X(...) and time.sleep(...) calls), word (WAIT, "
        "DONE, FAIL, CALL_USER, a 'BASH ' command line), dict (a structured action).",
        True,
    ),
    Field(
        "call_text",
        "string",
        "The call as written in the code (its source text); the word of a special word; null "
        "for a dict action (steps.action_text holds it).",
    ),
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
    Field(
        "line_no",
        "int32",
        "1-based line number, for line-oriented files: the first line of the run of lines the "
        "row stands for.",
    ),
    Field(
        "line_end",
        "int32",
        "Last line the row stands for: consecutive lines of one file quarantined for the same "
        "reason are stored as one row, from line_no to line_end (equal for a single line). Null "
        "when line_no is.",
    ),
    Field(
        "n_lines",
        "int32",
        "How many lines the row stands for (line_end - line_no + 1), so quarantined lines are "
        "counted by summing it, not by counting rows. Null for rows not about lines (a file, a "
        "source), and in rows written before it existed, which stand for one line each.",
    ),
    Field(
        "reason",
        "string",
        "Short machine-readable reason: invalid_json, blank_line, not_an_object, not_utf8, "
        "unparseable_result, line_too_long, over_run_cap, over_trajectory_cap, too_large, "
        "special_file, "
        "undecodable_name, nested_archive, lfs_pointer (a Git LFS pointer in a file's place), "
        "outside_task_folder (a traj.jsonl in no task folder found), "
        "...",
        True,
    ),
    Field("message", "string", "What happened and what to do, for people.", True),
    Field("excerpt", "string", "The first bytes of the offending input (at most 200 characters)."),
)

METRIC_COLUMNS = Field(
    "*",
    "metrics",
    "Stands where the metric registry's columns go; set_metric_fields puts them in its place.",
)
"""The score tables' metric columns are declared with the metrics (deskscore.scorers.metrics),
which fills them in through `set_metric_fields`: this package imports nothing of ours. Until the
registry is imported the placeholder stays, so a premature use fails instead of silently
missing columns."""

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
    METRIC_COLUMNS,
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
        "n_tasks_matched",
        "int32",
        "Episodes with a usable result that match a human task of the data version. When it is "
        "0 the figures over the N human tasks (OSWorld-Human success rate, WES+, WES-, WES, "
        "mean_t_fail) are null under the deskscore rules (0, as the original computes them, "
        "under osworld-human): nothing was measured against human data.",
        True,
    ),
    METRIC_COLUMNS,
)

RUN_SCORE_INTERVALS = _t(
    "run_score_intervals",
    "The uncertainty of each run figure of run_scores (and of cost per task and per success of "
    "run_costs): one row per run, score configuration, figure and method. The bootstrap "
    "resamples the figure's units (the episodes, or the N human tasks with a task not run "
    "counting 0) with replacement, all together or within their domain (OSWorld domain, "
    "DeskCraft app), seeded; success rates also get the analytic clustered standard error "
    "(deskscore.scorers.intervals). A figure that is null in run_scores has no row. Written "
    "by `deskscore score` beside run_scores, one file per configuration.",
    ("run_id", "human_version", "max_steps_scoring", "compat", "metric", "method"),
    ("benchmark", "run_id"),
    RUN_ID,
    BENCHMARK,
    HUMAN_VERSION,
    Field("max_steps_scoring", "int32", "The --max-steps-scoring asked for.", True),
    Field("compat", "string", "Scoring rules: deskscore (default) or osworld-human.", True),
    Field(
        "metric", "string", "The figure: a metric of the registry (its run_scores column).", True
    ),
    Field(
        "method",
        "string",
        "bootstrap (tasks resampled together), bootstrap_domain (within their domain or app; "
        "what the leaderboard shows) or analytic_clustered (clustered by domain, estimate +- "
        "1.96 SE; success rates only).",
        True,
    ),
    Field(
        "estimate",
        "float64",
        "The figure on the units themselves: equal to its run_scores (or run_costs) value.",
        True,
    ),
    Field("se", "float64", "Standard error (the resampled figures' standard deviation)."),
    Field("ci_low", "float64", "Lower end of the 95% interval (2.5th resampled percentile)."),
    Field("ci_high", "float64", "Upper end of the 95% interval (97.5th resampled percentile)."),
    Field("n_units", "int32", "Units resampled: episodes or human tasks.", True),
    Field("n_clusters", "int32", "Domains (or apps) among them.", True),
    Field("n_resamples", "int32", "Bootstrap resamples (score --bootstrap-resamples).", True),
    Field("seed", "int64", "The generator's seed (score --bootstrap-seed).", True),
)

TRIAL_SCORES = _t(
    "trial_scores",
    "Figures over the trials of one configuration (the runs sharing a run_group), under one "
    "score configuration: one row per k = 1 .. n_trials. For a task, n = the group's trials "
    "that ran it with a usable result and c = those that succeeded strictly (r == 1); pass@k "
    "and pass^k are averaged over the tasks with n >= k (deskscore.scorers.trials). Written by "
    "`deskscore score` after its per-run stages, one file per benchmark and configuration.",
    ("run_group", "human_version", "max_steps_scoring", "compat", "k"),
    ("benchmark",),
    Field("run_group", "string", "The group (runs.run_group; a run alone is its own).", True),
    BENCHMARK,
    HUMAN_VERSION,
    Field("max_steps_scoring", "int32", "The --max-steps-scoring asked for.", True),
    Field("compat", "string", "Scoring rules: deskscore (default) or osworld-human.", True),
    Field(
        "n_trials",
        "int32",
        "Runs of the group with figures under this configuration (K: the largest k).",
        True,
    ),
    Field("run_ids", "list<string>", "Those runs' ids, in the order of their trial labels.", True),
    Field(
        "trials", "list<string>", "Their trial labels (runs.trial; '' for none), same order.", True
    ),
    Field(
        "n_tasks",
        "int32",
        "Tasks at least one trial ran with a usable result (episode_scores.reward not null).",
        True,
    ),
    Field(
        "mean_reward",
        "float64",
        "Mean over those tasks of each task's mean reward over the trials that ran it (partial "
        "credit counts; strict success is pass_at_k at k = 1). Null without such a task.",
    ),
    Field("k", "int32", "Trials drawn: 1 .. n_trials.", True),
    Field(
        "n_tasks_k",
        "int32",
        "Tasks with n >= k, which the two means of this row are over (a task fewer than k "
        "trials ran has no estimate at k).",
        True,
    ),
    Field(
        "pass_at_k",
        "float64",
        "Mean over those tasks of 1 - C(n-c, k) / C(n, k): the chance that at least one of k "
        "trials succeeds. At k = 1, the mean per-task success rate c / n. Null without a task.",
    ),
    Field(
        "pass_hat_k",
        "float64",
        "pass^k: mean over those tasks of C(c, k) / C(n, k): the chance that all k trials "
        "succeed. Null without a task.",
    ),
)

TRIAL_VARIANCE = _t(
    "trial_variance",
    "The standard error of a run group's mean strict success over its trials, split into the "
    "part due to tasks differing (between) and the part due to each task's trials varying "
    "(within, shrinking with more trials): var(task means) = var_between + var_within / K "
    "(deskscore.scorers.trials.variance_split). Over the tasks two trials or more ran; one row "
    "per group of two trials or more and score configuration, written with trial_scores.",
    ("run_group", "human_version", "max_steps_scoring", "compat"),
    ("benchmark",),
    Field("run_group", "string", "The group (runs.run_group).", True),
    BENCHMARK,
    HUMAN_VERSION,
    Field("max_steps_scoring", "int32", "The --max-steps-scoring asked for.", True),
    Field("compat", "string", "Scoring rules: deskscore (default) or osworld-human.", True),
    Field("n_trials", "int32", "Runs of the group with figures under this configuration.", True),
    Field("n_tasks", "int32", "Tasks two trials or more ran with a usable result.", True),
    Field("mean_success", "float64", "Mean over those tasks of each task's strict-success rate."),
    Field("se", "float64", "sqrt(var(task means) / n_tasks): mean_success's standard error."),
    Field("var_within", "float64", "Mean over tasks of a task's outcome variance (ddof 1)."),
    Field("var_between", "float64", "var(task means) - var_within / K, floored at 0."),
    Field("se_within", "float64", "sqrt(var_within / (K n)): what more trials per task shrink."),
    Field("se_between", "float64", "sqrt(var_between / n): what only more tasks shrink."),
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

_EPISODE_KEY_FIELDS = (RUN_ID, BENCHMARK, DOMAIN, TASK_ID)

_CALL_IDX = Field(
    "call_idx",
    "int32",
    "0-based index of the call among the episode's llm_calls rows, in the order they were read.",
    True,
)
_STEP_NUM = Field(
    "step_num",
    "int32",
    "The turn (runner's step_num) the call belongs to; null when the source does not say.",
)
_STAGE = Field(
    "stage",
    "string",
    "What the call was for: planning, reflection, judging, grounding, retrieval or other. A "
    "single policy call that decides a turn's action counts as planning.",
    True,
)

LLM_CALLS = _t(
    "llm_calls",
    "One row per model call an archive records: tokens, latency and stage, as the runner "
    "reported them (a field the format lacks stays null; nothing is estimated).",
    ("run_id", "domain", "task_id", "call_idx"),
    ("benchmark", "run_id"),
    *_EPISODE_KEY_FIELDS,
    _CALL_IDX,
    _STEP_NUM,
    Field(
        "step_idx",
        "int32",
        "step_idx of the first step row of that turn (the join to steps), when there is one.",
    ),
    _STAGE,
    Field("stage_raw", "string", "The stage, module or agent name as the source spells it."),
    Field(
        "model",
        "string",
        "Model the source names for the call; null when it names none (cost then falls back "
        "to the run's model, see llm_call_costs.model_source).",
    ),
    Field(
        "prompt_tokens",
        "int64",
        "All input tokens, cache reads and cache writes included (OpenAI's prompt_tokens; "
        "Anthropic's input_tokens + cache_read_input_tokens + cache_creation_input_tokens).",
    ),
    Field(
        "cached_prompt_tokens",
        "int64",
        "Input tokens read from the provider's prompt cache (a part of prompt_tokens).",
    ),
    Field(
        "cache_write_tokens",
        "int64",
        "Input tokens written to the prompt cache (a part of prompt_tokens; Anthropic only).",
    ),
    Field("completion_tokens", "int64", "Output tokens as the provider reports them."),
    Field("reasoning_tokens", "int64", "Reasoning (thinking) tokens, where reported."),
    Field(
        "reasoning_in_completion",
        "bool",
        "True when completion_tokens already include reasoning_tokens (OpenAI, Anthropic, "
        "inspect_ai); False when they are reported apart (Gemini's thoughts_token_count).",
    ),
    Field("latency_s", "float64", "Seconds the call took, as the runner timed it."),
    Field("started_at", "timestamp", "When the call started, where the source records it."),
    Field(
        "usage_format",
        "string",
        "Shape the numbers were read from: gpt54.model_usage, openai.chat, openai.responses, "
        "anthropic, inspect_ai, gemini, agent_s.info, flat.",
        True,
    ),
    Field(
        "source_file",
        "string",
        "File the call was read from, inside the source (traj.jsonl or token_usage.json).",
        True,
    ),
    Field("line_no", "int32", "1-based line of traj.jsonl the call was read from, if any."),
    Field("usage_json", "json", "The usage object as archived, verbatim."),
)

_COST_DOC = "US dollars, computed once by the score pipeline from tokens x price per million"

LLM_CALL_COSTS = _t(
    "llm_call_costs",
    "The price of each llm_calls row under the price table of the last cost computation.",
    ("run_id", "domain", "task_id", "call_idx"),
    ("benchmark", "run_id"),
    *_EPISODE_KEY_FIELDS,
    _CALL_IDX,
    _STEP_NUM,
    _STAGE,
    Field("model", "string", "The model priced: the call's own, else the run's."),
    Field(
        "model_source",
        "string",
        "Where model came from: call (the source names it), run (the run's model, for "
        "formats such as gpt54's model_usage that name none) or none.",
        True,
    ),
    Field("price_model", "string", "The price table row that matched, if any."),
    Field(
        "price_match",
        "string",
        "How the price was found: exact, normalised (provider prefix or date suffix dropped), "
        "or null (no price: cost is null, never zero).",
    ),
    Field("price_read_on", "string", "Date the matched price was read (from the price table)."),
    Field("input_cost_usd", "float64", f"Uncached input tokens at the input rate; {_COST_DOC}."),
    Field(
        "cached_input_cost_usd",
        "float64",
        f"Cached input tokens at the cached-input rate; {_COST_DOC}.",
    ),
    Field(
        "cache_write_cost_usd",
        "float64",
        f"Cache-write tokens at the cache-write rate; {_COST_DOC}.",
    ),
    Field(
        "output_cost_usd",
        "float64",
        f"Output tokens (reasoning added when reported apart) at the output rate; {_COST_DOC}.",
    ),
    Field(
        "cost_usd",
        "float64",
        "The call's cost; null when the model has no price or the call lacks token counts.",
    ),
    Field(
        "unpriced_reason",
        "string",
        "Why cost_usd is null: no_price (the model is not in the price table), no_tokens (the "
        "call reports no prompt or completion count) or inconsistent_tokens (cached plus "
        "cache-write tokens exceed the prompt tokens).",
    ),
)

EPISODE_COSTS = _t(
    "episode_costs",
    "Per-episode tokens, cost and time: sums of the episode's calls, and its wall time.",
    ("run_id", "domain", "task_id"),
    ("benchmark", "run_id"),
    *_EPISODE_KEY_FIELDS,
    Field("n_llm_calls", "int32", "Model calls recorded for the episode.", True),
    Field("n_unpriced_calls", "int32", "Calls whose cost is null (no price or no tokens).", True),
    Field("n_calls_without_latency", "int32", "Calls that carry no latency.", True),
    Field("prompt_tokens", "int64", "Sum of prompt_tokens over the calls that report it."),
    Field("cached_prompt_tokens", "int64", "Sum of cached_prompt_tokens."),
    Field("cache_write_tokens", "int64", "Sum of cache_write_tokens."),
    Field("completion_tokens", "int64", "Sum of completion_tokens."),
    Field("reasoning_tokens", "int64", "Sum of reasoning_tokens."),
    Field(
        "cost_usd",
        "float64",
        "Sum of the calls' costs; null when there is no call or any call is unpriced (a "
        "partial sum is never shown as the total).",
    ),
    Field("priced_cost_usd", "float64", "Sum over the priced calls only: a lower bound."),
    Field(
        "llm_latency_s",
        "float64",
        "Sum of the calls' latencies; null when no call carries one.",
    ),
    Field(
        "task_time_s",
        "float64",
        "Wall time: last action timestamp minus the first, plus the recorded latency of the "
        "first turn's calls (they precede the first action); null without two timestamps.",
    ),
    Field("n_turns", "int32", "Model turns of the episode (episodes.n_turns)."),
)

RUN_COSTS = _t(
    "run_costs",
    "Per-run cost and time, beside the run's success: what `deskscore cost` prints.",
    ("run_id",),
    ("benchmark", "run_id"),
    RUN_ID,
    BENCHMARK,
    Field("n_episodes", "int32", "Task folders of the run.", True),
    Field("n_episodes_with_usage", "int32", "Task folders with at least one recorded call.", True),
    Field("n_llm_calls", "int64", "Model calls recorded.", True),
    Field("n_unpriced_calls", "int64", "Calls whose cost is null.", True),
    Field("unpriced_models", "list<string>", "Models of the unpriced calls, sorted."),
    Field("prompt_tokens", "int64", "Sum of prompt_tokens."),
    Field("cached_prompt_tokens", "int64", "Sum of cached_prompt_tokens."),
    Field("cache_write_tokens", "int64", "Sum of cache_write_tokens."),
    Field("completion_tokens", "int64", "Sum of completion_tokens."),
    Field("reasoning_tokens", "int64", "Sum of reasoning_tokens."),
    Field("cost_usd", "float64", "Total cost; null when any call is unpriced or none exists."),
    Field("priced_cost_usd", "float64", "Sum over priced calls only: a lower bound."),
    Field(
        "cost_per_task_usd",
        "float64",
        "cost_usd / n_episodes_with_usage: the mean cost of a task the agent worked on.",
    ),
    Field(
        "n_tasks_run",
        "int32",
        "Episodes with a usable result (deskscore rules).",
        True,
    ),
    Field("n_successes", "int32", "Episodes with r == 1 (deskscore rules).", True),
    Field("success_rate_run", "float64", "sum(r) / n_tasks_run (deskscore rules)."),
    Field("cost_per_success_usd", "float64", "cost_usd / n_successes."),
    Field("llm_latency_s", "float64", "Sum of the calls' latencies, where recorded."),
    Field("median_task_s", "float64", "Median of episode_costs.task_time_s."),
    Field("mean_task_s", "float64", "Mean of episode_costs.task_time_s."),
    Field(
        "prices",
        "string",
        "Which price table priced the calls: 'bundled <date>' plus any override file, with "
        "a short content hash.",
        True,
    ),
)

INTERACTIONS = _t(
    "interactions",
    "One row per user/agent exchange of an interactive (DeskCraft) episode, in order: what "
    "the simulated user said and when, and the agent's CALL_USER questions.",
    ("run_id", "domain", "task_id", "seq"),
    ("benchmark", "run_id"),
    BENCHMARK,
    RUN_ID,
    DOMAIN,
    TASK_ID,
    Field("seq", "int32", "0-based order of the exchange in the episode's interaction log.", True),
    Field(
        "step",
        "int32",
        "The agent step the exchange follows, as the log says; null before the first step.",
    ),
    Field("phase", "int32", "The phase_id the exchange belongs to."),
    Field(
        "type",
        "string",
        "initial_instruction, new_instruction, clarify or call_user (the agent's CALL_USER "
        "question: an interaction, never an environment step).",
        True,
    ),
    Field("message", "string", "The user's or the agent's text."),
    Field("phase_complete", "bool", "Whether the user simulator declared the phase complete."),
    Field("reason", "string", "The user simulator's stated reason, if logged."),
    Field("timestamp", "timestamp", "When the exchange happened, parsed (naive times as UTC)."),
    Field("timestamp_raw", "string", "The timestamp as archived, verbatim."),
)

VERDICTS = _t(
    "verdicts",
    "One row per episode x verdict source x rule: the archived score, scores recomputed "
    "offline from the archive, and LLM-judged verdicts, side by side so they can disagree.",
    ("run_id", "domain", "task_id", "source", "rule"),
    ("benchmark", "run_id"),
    BENCHMARK,
    RUN_ID,
    DOMAIN,
    TASK_ID,
    Field(
        "source",
        "string",
        "archived, recomputed or judged; each is its own file in the partition (file name = "
        "source) so writers never erase each other's rows.",
        True,
    ),
    Field(
        "rule",
        "string",
        "archived: result_txt; recomputed: infeasible, final_fail, conj or or; judged: "
        "k_consecutive.",
        True,
    ),
    Field(
        "score",
        "float64",
        "archived: the reward as written; recomputed: the rule's score; judged: the fraction "
        "of rounds passed.",
    ),
    Field(
        "passed",
        "bool",
        "Strict success: score == 1 (judged: k consecutive passing rounds).",
    ),
    Field(
        "agrees_with_archived",
        "bool",
        "Whether the verdict matches result.txt: recomputed rows compare scores (partial "
        "credit included), judged rows compare passed with the archived strict success. Null "
        "when there is no archived score, and on the archived row itself.",
    ),
    Field("details", "json", "JSON text: per-metric scores, judge rounds, reasons."),
    Field("judge_model", "string", "Model that judged (judged rows only)."),
    Field(
        "prompt_hash",
        "string",
        "Hash of the judge's prompt template version, request settings and the exact messages "
        "sent (judged rows only).",
    ),
)

JUDGE_CALLS = _t(
    "judge_calls",
    "One row per judging round sent to an LLM judge (`deskscore judge`): its verdict and cost. "
    "Also the judge's cache: a round whose (episode, judge_model, prompt_hash, round) is here "
    "is never sent again. Never holds the API key.",
    ("run_id", "domain", "task_id", "judge_model", "prompt_hash", "round"),
    ("benchmark", "run_id"),
    BENCHMARK,
    RUN_ID,
    DOMAIN,
    TASK_ID,
    Field("judge_model", "string", "Model asked to judge, as given to --model.", True),
    Field(
        "prompt_hash",
        "string",
        "SHA-256 of the prompt template version, the request parameters and the exact "
        "messages sent (screenshots included): a changed episode or template gets a new hash.",
        True,
    ),
    Field("round", "int32", "1-based judging round of the k-consecutive-passes rule.", True),
    Field("template_version", "string", "Version of the judge prompt template.", True),
    Field(
        "status",
        "string",
        "ok (the reply followed the contract), unparseable (reply text did not) or bad_body "
        "(an HTTP 200 whose body was not a chat completion).",
        True,
    ),
    Field("verdict", "string", "pass or fail as the judge said; null unless status is ok."),
    Field("passed", "bool", "Whether the round passed (unparseable rounds do not).", True),
    Field(
        "reason",
        "string",
        "The judge's reason; for a round that is not ok, why its reply could not be read.",
    ),
    Field("http_status", "int32", "HTTP status of the attempt that got the reply.", True),
    Field(
        "attempts", "int32", "Requests sent for the round, retries after 429/5xx included.", True
    ),
    Field("latency_s", "float64", "Seconds the answered attempt took."),
    Field("prompt_tokens", "int64", "usage.prompt_tokens of the reply, when reported."),
    Field("completion_tokens", "int64", "usage.completion_tokens of the reply, when reported."),
    Field("total_tokens", "int64", "usage.total_tokens of the reply, when reported."),
    Field("response_model", "string", "The model the endpoint says answered."),
    Field("n_images", "int32", "Screenshots sent with the prompt.", True),
    Field("judged_at", "timestamp", "When the reply arrived (UTC).", True),
)

TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        RUNS,
        SOURCES,
        SCORE_INPUTS,
        TASKS,
        HUMAN_REFS,
        EPISODES,
        STEPS,
        STEP_ACTIONS,
        QUARANTINE,
        EPISODE_SCORES,
        RUN_SCORES,
        RUN_SCORE_INTERVALS,
        TRIAL_SCORES,
        TRIAL_VARIANCE,
        SCREENSHOTS,
        SCREENSHOT_REFS,
        LOOP_SPANS,
        LLM_CALLS,
        LLM_CALL_COSTS,
        EPISODE_COSTS,
        RUN_COSTS,
        INTERACTIONS,
        VERDICTS,
        JUDGE_CALLS,
    )
}

_DECLARED: dict[str, Table] = {t.name: t for t in (EPISODE_SCORES, RUN_SCORES)}


def set_metric_fields(table: str, fields: tuple[Field, ...]) -> None:
    """Put `fields` in the place of `table`'s METRIC_COLUMNS: the hook the metric registry
    fills whenever a metric is registered or removed."""
    declared = _DECLARED[table]
    at = declared.fields.index(METRIC_COLUMNS)
    TABLES[table] = declared._replace(
        fields=declared.fields[:at] + tuple(fields) + declared.fields[at + 1 :]
    )


def awaiting_metrics(table: str) -> bool:
    """Whether `table` still holds METRIC_COLUMNS: the metric registry was never imported."""
    return METRIC_COLUMNS in TABLES[table].fields
