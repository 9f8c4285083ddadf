"""Coverage-guided fuzzing of the archive readers with atheris (optional: `pip install atheris`).

    python benchmarks/fuzz_readers.py --target osworld -atheris_runs=100000
    python benchmarks/fuzz_readers.py --target all -atheris_runs=100000   # each in turn

Each target builds one kind of run from the fuzzer's bytes and reads it as `deskscore ingest`
does (`discover_source`, then the format's run-meta and episode readers), then conforms every
row to the warehouse schema. Any exception escaping (other than SourceError for a source that
cannot be opened at all) is a crash: atheris stops and prints the input. Targets:

- `osworld`: a task folder's traj.jsonl, result.txt, instruction.txt and the run's args.json,
  all_result.json, summary/results.json;
- `zip`: any bytes as a zip, or the same run zipped with bytes overwritten (headers, names,
  flags, versions, sizes, the end record) and a fuzzed comment;
- `usage`: traj.jsonl records carrying model usage, and token_usage.json;
- `messages`: traj.jsonl with an Anthropic computer-use messages.json beside it
  (`collectors.claude_messages`);
- `deskcraft`: a DeskCraft task folder: traj.jsonl, result.txt, interaction_log.json,
  eval_details.json, task_instruction.jsonl;
- `step_traces`: step_NN_trace.json files and the run's results.csv (`collectors.step_traces`);
- `uitars`: a UI-TARS submission's data.json and meta.json.

Inputs are seeded with valid files of each kind (mutated from there), so the fuzzer reaches
the readers' deeper branches quickly. `--target all` runs each target in a fresh process and
prints inputs, exceptions escaped (0 for a clean run: atheris stops at the first) and time;
an input that crashed is written to the temporary folder (deskscore-fuzz-<target>-crash-*).
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from typing import Any

import atheris

with atheris.instrument_imports():
    from deskscore.collectors.formats import get
    from deskscore.collectors.layout import discover_source
    from deskscore.collectors.source import Source, SourceError, ZipSource
    from deskscore.schemas import conform_rows

RUN = "pyautogui/screenshot/model-x"
TASK = "chrome/030eeff7-b492-4218-b312-701ec99ee0cc"
DESKCRAFT_TASK = "chrome/L1_chrome_open_settings"
STEP = (
    b'{"step_num": 1, "action_timestamp": "20250101@120000", "action": "pyautogui.click(1, 2)", '
    b'"response": "click", "reward": 0, "done": false, "info": {}, '
    b'"screenshot_file": "step_1_20250101@120000.png"}'
)
USAGE = (
    b'{"step_num": 1, "action": "DONE", "model_usage": {"model": "gpt-4o", "input_tokens": 10, '
    b'"output_tokens": 2, "latency_s": 1.5}}'
)
MESSAGES = json.dumps(
    [
        {"role": "system", "content": "You are asked to complete the following task: open it"},
        {"role": "assistant", "content": [{"type": "text", "text": "I click"}]},
        {
            "role": "user",
            "content": "Executed a translation of your issued tool call: ['pyautogui.click(1, 2)']",
        },
    ]
).encode()


class MemorySource(Source):
    """A run held in a dict: the readers see the same interface as a folder or a zip."""

    kind = "memory"

    def __init__(self, files: dict[str, bytes]) -> None:
        self.uri = "memory://fuzz"
        self.problems = []
        self._data = files

    def files(self) -> list[str]:
        return sorted(self._data)

    def read_bytes(self, path: str) -> bytes:
        if path not in self._data:
            raise SourceError(self.uri, f"no file {path!r}", path)
        return self._data[path]

    def size(self, path: str) -> int:
        return len(self.read_bytes(path))

    def files_held(self) -> dict[str, bytes]:
        return dict(self._data)


def _read_all(src: Source) -> None:
    """Read every run as ingest does, and conform every row to its table."""
    runs, problems = discover_source(src)
    conform_rows("quarantine", [{"run_id": "r", "benchmark": "b", "source": src.uri,
                                 **p} for p in problems])  # fmt: skip
    for run in runs:
        fmt = get(run.format)
        meta = fmt.read_run_meta(src, run, run_id="r", benchmark="osworld")
        conform_rows("runs", [{**meta.run, "content_hash": "h"}])
        conform_rows("quarantine", meta.quarantine)
        reads = fmt.episodes(src, run, run_id="r", benchmark="osworld", reported=meta.reported)
        for calls in reads:
            conform_rows("episodes", [calls.read.episode])
            conform_rows("steps", calls.read.steps)
            conform_rows("quarantine", calls.read.quarantine)
            conform_rows("llm_calls", calls.llm_calls)
            if calls.interactions is not None:
                conform_rows("interactions", calls.interactions)


def _files(fdp: atheris.FuzzedDataProvider, names: dict[str, bytes]) -> dict[str, bytes]:
    """Each named file: its seed, or the fuzzer's bytes (half the time each)."""
    out = {}
    for name, seed in names.items():
        if fdp.ConsumeBool():
            out[name] = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4096))
        elif fdp.ConsumeBool():
            out[name] = seed
    return out


def _osworld(fdp: atheris.FuzzedDataProvider) -> Source:
    base = f"{RUN}/{TASK}"
    return MemorySource(
        {
            f"{base}/traj.jsonl": fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4096)) or STEP,
            **_files(
                fdp,
                {
                    f"{base}/result.txt": b"1.0\n",
                    f"{base}/instruction.txt": b"open the settings",
                    f"{RUN}/args.json": b'{"model": "model-x", "max_steps": 15}',
                    f"{RUN}/all_result.json": b"{'chrome': {'030eeff7': 1.0}}",
                    f"{RUN}/summary/results.json": b'[{"task_id": "030eeff7", "score": 1}]',
                },
            ),
        }
    )


def _zip(fdp: atheris.FuzzedDataProvider) -> Source:
    """Half the time any bytes; else a zip of a fuzzed run, with fuzzed comment and bytes
    overwritten (headers, names, flags, versions, sizes, the end record)."""
    if fdp.ConsumeBool():
        return ZipSource("fuzz.zip", io.BytesIO(fdp.ConsumeBytes(fdp.remaining_bytes())))
    members = _osworld(fdp).files_held()
    buf = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if fdp.ConsumeBool() else zipfile.ZIP_STORED
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.comment = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 64))
    raw = bytearray(buf.getvalue())
    for _ in range(fdp.ConsumeIntInRange(0, 6)):
        raw[fdp.ConsumeIntInRange(0, len(raw) - 1)] = fdp.ConsumeIntInRange(0, 255)
    return ZipSource("fuzz.zip", io.BytesIO(bytes(raw)))


def _usage(fdp: atheris.FuzzedDataProvider) -> Source:
    base = f"{RUN}/{TASK}"
    return MemorySource(
        {
            f"{base}/traj.jsonl": USAGE + b"\n" + fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 2048)),
            **_files(
                fdp,
                {
                    f"{base}/token_usage.json": b'[{"model": "gpt-4o", "prompt_tokens": 10, '
                    b'"completion_tokens": 2, "step": 1}]',
                    f"{base}/result.txt": b"0\n",
                },
            ),
        }
    )


def _messages(fdp: atheris.FuzzedDataProvider) -> Source:
    base = f"{RUN}/{TASK}"
    return MemorySource(
        {
            f"{base}/traj.jsonl": STEP + b"\n" + fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 1024)),
            f"{base}/messages.json": fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4096)) or MESSAGES,
            f"{base}/result.txt": b"1\n",
        }
    )


def _deskcraft(fdp: atheris.FuzzedDataProvider) -> Source:
    base = f"{RUN}/{DESKCRAFT_TASK}"
    return MemorySource(
        {
            f"{base}/interaction_log.json": fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4096))
            or b'[{"type": "initial_instruction", "step": 0, "message": "open it"}]',
            **_files(
                fdp,
                {
                    f"{base}/traj.jsonl": STEP,
                    f"{base}/result.txt": b"1\n",
                    f"{base}/eval_details.json": b'{"conj": "and", "metrics": [{"func": "f", '
                    b'"score": 1}]}',
                    f"{base}/task_instruction.jsonl": b'{"instruction": "open it"}\n',
                },
            ),
        }
    )


def _step_traces(fdp: atheris.FuzzedDataProvider) -> Source:
    task = "run/030eeff7-b492-4218-b312-701ec99ee0cc"
    files = {"run/results.csv": b"task_id,score\n030eeff7-b492-4218-b312-701ec99ee0cc,1\n"}
    if fdp.ConsumeBool():
        files["run/results.csv"] = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 2048))
    for n in range(fdp.ConsumeIntInRange(1, 4)):
        files[f"{task}/step_{fdp.ConsumeIntInRange(0, 12)}_trace.json"] = (
            fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 2048))
            if fdp.ConsumeBool()
            else b'{"action": "pyautogui.click(1, 2)", "thought": "t%d", "usage": {"input_tokens"'
            b": 3}}" % n
        )
    return MemorySource(files)


def _uitars(fdp: atheris.FuzzedDataProvider) -> Source:
    return MemorySource(
        {
            "run/task_000/data.json": fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4096))
            or b'[{"inner_step": [{"action": "click", "score": 1}]}]',
            "run/task_000/meta.json": fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 512))
            or b'{"query": "open the settings"}',
        }
    )


TARGETS = {
    "osworld": _osworld,
    "zip": _zip,
    "usage": _usage,
    "messages": _messages,
    "deskcraft": _deskcraft,
    "step_traces": _step_traces,
    "uitars": _uitars,
}


def _one_input(build: Callable[[Any], Source]) -> Callable[[bytes], None]:
    def one_input(data: bytes) -> None:
        fdp = atheris.FuzzedDataProvider(data)
        try:
            src = build(fdp)
        except SourceError:  # a zip that cannot be opened at all: said, not a crash
            return
        with src:
            _read_all(src)

    return one_input


def _all(argv: list[str]) -> int:
    """Each target in a fresh process; a table of inputs, escapes and time."""
    runs = next((a for a in argv if a.startswith("-atheris_runs=")), "-atheris_runs=100000")
    rows, failed = [], 0
    for name in TARGETS:
        started = time.perf_counter()
        crashes = f"-artifact_prefix={tempfile.gettempdir()}/deskscore-fuzz-{name}-"
        done = subprocess.run(
            [sys.executable, __file__, "--target", name, runs, "-print_final_stats=1", crashes],
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        # libFuzzer's last line: "Done N in S second(s)" (atheris prints no stat:: lines)
        found = re.findall(r"^Done (\d+) (?:runs )?in ", done.stderr, re.M)
        inputs = found[-1] if found else "?"
        escaped = 0 if done.returncode == 0 else 1
        failed += escaped
        rows.append((name, inputs, escaped, f"{seconds:.0f} s"))
        if escaped:
            print(f"{name}: exited {done.returncode}\n{done.stderr[-3000:]}")
    print(f"{'target':<12} {'inputs':>8} {'escaped':>8} {'time':>8}")
    for name, inputs, escaped, seconds in rows:
        print(f"{name:<12} {inputs:>8} {escaped:>8} {seconds:>8}")
    return 1 if failed else 0


def main() -> int:
    args = sys.argv[1:]
    target = "osworld"
    if "--target" in args:
        at = args.index("--target")
        target = args[at + 1]
        del args[at : at + 2]
    if target == "all":
        return _all(args)
    atheris.Setup([sys.argv[0], *args], _one_input(TARGETS[target]))
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
