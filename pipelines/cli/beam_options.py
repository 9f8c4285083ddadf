"""Which of a command line's options go to Apache Beam, and which are mistakes.

A command that runs a Beam job (`beam=True` in its parser's defaults) passes Beam's own
options on (`--runner=FlinkRunner`, `--flink_master ...`): the flags Beam's PipelineOptions
classes declare, collected from Beam itself, and anything after `--`, as given. Any other
option is an error naming it and the option it was probably meant to be: Beam would discard
it with a log line, and the command would quietly run with the default.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import functools
from collections.abc import Iterable, Sequence


@functools.cache
def beam_flags() -> dict[str, bool]:
    """Every flag of Beam's PipelineOptions classes -> whether it takes a value."""
    from apache_beam.options import pipeline_options as po

    with contextlib.suppress(ImportError):  # the Dask runner's options, when Dask is there
        import apache_beam.runners.dask.dask_runner  # noqa: F401

    parser = po._BeamArgumentParser(allow_abbrev=False, add_help=False, conflict_handler="resolve")
    seen: set[type] = set()
    todo: list[type] = [po.PipelineOptions]
    while todo:
        for cls in todo.pop().__subclasses__():
            if cls in seen:
                continue
            seen.add(cls)
            todo.append(cls)
            if "_add_argparse_args" in vars(cls):  # declared here, not inherited
                cls._add_argparse_args(parser)
    return {flag: a.nargs != 0 for a in parser._actions for flag in a.option_strings}


def _is_beam_flag(name: str) -> bool:
    """Whether `name` is one of Beam's own flags (False when Beam is not installed)."""
    from deskscore.pipelines.infra.extras import has

    return has("apache_beam") and name in beam_flags()


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """The options `parser` itself knows."""
    return [flag for a in parser._actions for flag in a.option_strings]


def _suggestion(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.7)
    return f"; did you mean {close[0]}?" if close else ""


def beam_args(
    parser: argparse.ArgumentParser,
    command: str,
    runs_beam: bool,
    unknown: Sequence[str],
    after_dashes: Sequence[str] = (),
) -> list[str]:
    """The options to hand to Beam out of what `parser` did not know (`unknown`) and what
    came after `--`; exits through `parser.error` (status 2, with usage) on anything else."""
    if after_dashes and not runs_beam:
        parser.error(
            f"options after -- go to Apache Beam, and deskscore {command} runs no Beam job: "
            f"{' '.join(after_dashes)}"
        )
    from deskscore.pipelines.infra.extras import has

    out: list[str] = []
    beam_missing = runs_beam and bool(unknown) and not has("apache_beam")
    flags = beam_flags() if runs_beam and unknown and not beam_missing else {}
    i = 0
    while i < len(unknown):
        arg = unknown[i]
        name = arg.split("=", 1)[0]
        if not arg.startswith("--") or name not in flags:
            if not arg.startswith("-"):
                parser.error(f"unexpected argument {arg!r}")
            hint = _suggestion(name, [*option_strings(parser), *flags])
            where = "" if runs_beam or hint else f" (deskscore {command} runs no Beam job)"
            if not runs_beam and hint and _is_beam_flag(name):  # not a typo of ours
                hint, where = "", f" (deskscore {command} runs no Beam job)"
            if beam_missing and arg.startswith("--"):
                hint += (
                    " (if it is one of Apache Beam's options: they need the beam extra, which "
                    "is not installed: pip install 'deskscore[beam]')"
                )
            parser.error(f"unrecognized option {arg}{where}{hint}")
        out.append(arg)
        if "=" not in arg and flags[name]:
            if i + 1 >= len(unknown) or unknown[i + 1].startswith("-"):
                parser.error(f"Beam's option {name} needs a value: {name}=VALUE")
            out.append(unknown[i + 1])
            i += 1
        i += 1
    return out + list(after_dashes)


__all__ = ["beam_args", "beam_flags", "option_strings"]
