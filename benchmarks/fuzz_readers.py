"""Coverage-guided fuzzing of the archive readers with atheris (optional: `pip install atheris`).

    python benchmarks/fuzz_readers.py -atheris_runs=20000

One input is split into a zip's bytes or a task folder's traj.jsonl, result.txt, args.json and
all_result.json; any exception escaping a reader (other than SourceError for an unreadable zip)
is a crash. Bounded by -atheris_runs, so it also serves as a smoke test.
"""

from __future__ import annotations

import io
import sys

import atheris

with atheris.instrument_imports():
    from deskscore.collectors.layout import discover
    from deskscore.collectors.osworld import read_episode
    from deskscore.collectors.run_meta import read_run_meta
    from deskscore.collectors.source import Source, SourceError, ZipSource

RUN = "pyautogui/screenshot/model-x"
TASK = "chrome/030eeff7-b492-4218-b312-701ec99ee0cc"
NAMES = (f"{TASK}/traj.jsonl", f"{TASK}/result.txt", "args.json", "all_result.json")


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


def _read_all(src: Source) -> None:
    for run in discover(src.files()):
        read_run_meta(src, run, run_id="r", benchmark="osworld")
        for task in run.tasks:
            read_episode(src, run, task, run_id="r", benchmark="osworld")


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    if fdp.ConsumeBool():
        try:
            src = ZipSource("fuzz.zip", io.BytesIO(fdp.ConsumeBytes(fdp.remaining_bytes())))
        except SourceError:
            return
        with src:
            _read_all(src)
        return
    files = {f"{RUN}/{name}": fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4096)) for name in NAMES}
    _read_all(MemorySource(files))


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
