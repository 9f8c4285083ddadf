"""`deskscore compare`: its options are checked before any bootstrap runs."""

from __future__ import annotations

import pytest

from deskscore.pipelines.cli.main import main


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--resamples", "-5", "must be 1 or more, not -5"),
        ("--resamples", "0", "must be 1 or more, not 0"),
        ("--seed", "-1", "must be 0 or more, not -1"),
    ],
)
def test_a_bootstrap_option_out_of_range_is_refused_in_one_line(
    option: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["compare", "a", "b", option, value])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert f"argument {option}: {message}" in err
