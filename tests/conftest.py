import os
import signal

os.environ.setdefault("PRA_NUM_THREADS", "1")


def pytest_configure(config):
    """A harness that starts the tests in the background without job control (``make test &`` in a script)
    leaves SIGINT ignored, and an ignored signal stays ignored in every child process: the Ctrl-C tests
    would fail for the harness's sake (their programs never see the signal). Restore Python's own handler,
    which an interactive start has; a handler, unlike SIG_IGN, is reset to the default in an exec'd child."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_terminal_summary(terminalreporter):
    """One line for the peer interop tests skipped because the peers' clones are absent (never a silent skip)."""
    from tests.support.peers import ENV, SKIP_MARK, shown_dir

    skipped = [r for r in terminalreporter.stats.get("skipped", []) if SKIP_MARK in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(
            f"peer interop: {len(skipped)} tests skipped, the peers' code is not in {shown_dir()}/ "
            f"(run `make peers`, which needs GitHub, or set {ENV}=<folder of clones>)",
            yellow=True,
        )


# Tests of a few seconds to minutes each, kept out of `make test` for its 10-minute budget on 2 cores:
# `make test-long` runs them (CI does, after `make test`). A node id prefix, and why it is long.
LONG = {
    (
        "tests/test_config_walk.py::test_every_task_key_changes_the_output_or_is_refused[reverberation_absolute."
    ): "samples rooms for every accepted value; .backend renders them with pyroomacoustics (minutes)",
    "tests/test_readme.py::test_readme_command[": "runs each command the docs show, as written",
    (
        "tests/test_readme.py::"
        "test_readme_generate_commands_plan_at_their_written_sizes[docs/tutorials/regenerate.md:L2"
    ): "plans the three-split command at full size",
    "tests/test_registries.py::test_source_dependent_targets_match_a_feature_of_a_recorded_source": "recorded clips",
    "tests/tasks/test_reverberation.py::test_absolute_margin_is_exact_classes_balanced_and_listener_easy": "rooms",
    (
        "tests/tasks/test_tone_tasks.py::test_answer_positions_balanced_and_every_option_answerable[reverberation_"
    ): "rooms",
    "tests/tasks/test_sampler_bounds.py::test_sampling_never_raises_at_any_rate[reverberation_absolute]": "rooms",
    "tests/test_generation_faults.py::": "each starts, kills and reruns generation processes",
    "tests/evaluation/test_eval_out_lock.py::": "concurrent evaluate processes",
    "tests/evaluation/test_interop_sonicbench.py::test_the_parser_never_misses": "every published system's replies",
    "tests/test_validity_table.py::test_the_results_file_holds_the_command_verdict_and_table": "a validity run",
    "tests/evaluation/test_psychometrics.py::test_every_reported_threshold_is_where": "fits every stored entry",
    "tests/evaluation/test_adaptive_cli.py::": "evaluate.py processes with a command model",
    "tests/evaluation/test_adaptive.py::test_model_errors_are_asked_again_and_never_scored_wrong": "adaptive runs",
    "tests/pipeline/test_determinism.py::test_spatial_motion_mixture_and_reorder_items_are_byte_identical": "rooms",
    "tests/validation/test_listener_spatial.py::test_listener_solves_the_physically_easy_levels[distance_": "rooms",
    "tests/evaluation/test_eval_cli.py::test_cli_run_writes_results_plots_and_leaderboard": "an evaluate process",
    "tests/evaluation/test_command_adapter.py::test_ctrl_c_during_a_hung_request": "a process and its model",
    "tests/test_cli.py::test_multirun_sweep_writes_one_dataset_per_job": "a generate multirun",
    "tests/test_cli.py::test_override_generates_requested_levels": "a generate process",
    "tests/sounds/test_corpus.py::test_labelled_corpus_items_name_their_classes_and_are_measured[mixture]": "mixtures",
    "tests/tasks/test_timbre.py::test_relative_labels_measured_and_controls_equal": "many timbre items",
    "tests/test_readme.py::test_readme_python_snippets_run[": "the README's Python, generation included",
    (
        "tests/test_readme.py::test_readme_generate_commands_plan_at_their_written_sizes[docs/howto/validity-report"
    ): "plan",
    "tests/sounds/test_corpus.py::test_clip_items_are_measured_and_byte_identical[": "recorded clips, twice",
    "tests/sounds/test_corpus.py::test_labelled_corpus_items_name_their_classes_and_are_measured[multi_": "rooms",
    "tests/tasks/test_reverberation.py::test_absolute_clip_length_and_loudness_do_not_follow": "rooms",
    "tests/test_validity_table.py::test_the_table_equals_the_reports": "a validity run",
    "tests/validation/test_listener_mixture.py::": "mixtures at every level",
    "tests/tasks/test_timbre.py::test_relative_listener_easiest_and_zero_level": "many timbre items",
    "tests/export/test_dependencies.py::test_generation_and_evaluation_run_without_datasets": "two processes",
    "tests/validation/test_listener_spatial.py::test_listener_solves_the_physically_easy_levels[azimuth_": "rooms",
    "tests/generation/test_answers.py::test_dealt_texts_are_balanced_per_level_and_per_task[reverberation_": "rooms",
    "tests/execution/test_ray_connect.py::": "needs the ray extra, which make test-long installs",
}


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        if any(item.nodeid.startswith(prefix) for prefix in LONG):
            item.add_marker(pytest.mark.long)
