"""Which configuration a report shows when options are left out, and what it says when the
one asked for was never scored."""

from __future__ import annotations

from deskscore.pipelines.cli.scored import chosen_configuration, not_scored
from deskscore.scorers.config import ScoreConfig

DEFAULT = ScoreConfig()


def test_a_warehouse_scored_once_shows_that_configuration() -> None:
    only = ScoreConfig("2025-06", 50, "osworld-human")
    assert chosen_configuration([only]) == only


def test_options_with_several_scored_values_take_the_defaults() -> None:
    configs = [
        ScoreConfig("verified", 50, "deskscore"),
        ScoreConfig("verified", 50, "osworld-human"),
    ]
    assert chosen_configuration(configs) == ScoreConfig("verified", 50, DEFAULT.compat)


def test_an_option_given_narrows_what_the_others_take() -> None:
    configs = [ScoreConfig("verified", 15, "deskscore"), ScoreConfig("2025-06", 100, "deskscore")]
    assert chosen_configuration(configs, human_version="2025-06") == configs[1]
    assert chosen_configuration(configs) == configs[0]  # two of each: the defaults


def test_options_given_are_kept_even_when_never_scored() -> None:
    configs = [ScoreConfig("verified", 50, "deskscore")]
    chosen = chosen_configuration(configs, max_steps_scoring=15)
    assert chosen == ScoreConfig("verified", 15, "deskscore") and chosen not in configs


def test_an_empty_warehouse_chooses_the_defaults() -> None:
    assert chosen_configuration([]) == DEFAULT


def test_the_message_names_what_was_scored_and_the_command_that_scores_the_rest() -> None:
    held = [ScoreConfig("verified", 50, "deskscore")]
    text = not_scored("W", ScoreConfig("verified", 15, "deskscore"), held)
    assert (
        "no figures for OSWorld-Human verified, step budget S = max(15, longest run), deskscore rules in W"
        in text
    )
    assert "OSWorld-Human verified, step budget S = max(50, longest run), deskscore rules (--human-version verified " \
        "--max-steps-scoring 50 --compat deskscore)" in text  # fmt: skip
    assert "'deskscore score --warehouse W --human-version verified --max-steps-scoring 15 " \
        "--compat deskscore'" in text  # fmt: skip
    assert "is scored yet" in not_scored("W", DEFAULT, [])
