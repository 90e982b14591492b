"""Reporting a session's trials: the terminal leaderboard, JSONL, JUnit properties, Allure, phase progress.

How the plugin's hooks use these modules (a trial's ``TrialResult`` in hand):

- while the trial runs: ``progress.PhaseProgress(config, title)`` gets each phase's start and end;
- at the end of the test (body or fixture): ``junit.add_properties(item, result)``, and
  ``allure.annotate(result)`` when ``allure.results_dir(config)`` is set; a missed trial then fails with
  ``pytest.fail(junit.failure_message(result), pytrace=False)``, an environment error raises an
  exception that is not an AssertionError;
- ``pytest_runtest_makereport``: ``carry.put(report, result)`` on the call report;
- ``pytest_runtest_logreport``, when ``carry.is_controller(config)``: ``jsonl.ResultsFile.append`` for
  each report that ``carry.result_of`` finds a result on;
- ``pytest_terminal_summary``: ``leaderboard.write(terminalreporter, carry.results_from_stats(stats))``;
- ``pytest_sessionfinish``, on the controller with an Allure directory:
  ``allure.write_session_files(directory, allure.environment(results) | extras)``.
"""
