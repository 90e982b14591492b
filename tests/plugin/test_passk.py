import math

import pytest

from pytest_itbench.evaluate.passk import benchmark_pass_at_k, mean_and_stderr, pass_at_k, pass_hat_k


def test_pass_at_k_is_the_unbiased_estimator():
    assert pass_at_k(10, 0, 1) == 0.0 and pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    # 1 - C(7,5)/C(10,5) = 1 - 21/252
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)
    assert pass_at_k(5, 2, 4) == 1.0  # fewer failures than k: a pass is certain
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_benchmark_figure_is_a_macro_average_with_its_standard_error():
    mean, err = benchmark_pass_at_k({"a": (4, 2), "b": (4, 0), "c": (4, 4)}, 1)
    assert mean == pytest.approx(0.5)
    assert err == pytest.approx(math.sqrt(((0.5 - 0.5) ** 2 + 0.25 + 0.25) / 2 / 3))
    assert all(math.isnan(x) for x in mean_and_stderr([]))  # no data, no figure


def test_pass_hat_k_is_the_chance_that_k_drawn_runs_all_pass():
    assert pass_hat_k(5, 5, 5) == 1.0 and pass_hat_k(5, 4, 5) == 0.0  # one failure in five breaks pass^5
    assert pass_hat_k(10, 3, 1) == pytest.approx(pass_at_k(10, 3, 1))  # k = 1: the same as pass@1
    assert pass_hat_k(4, 3, 2) == pytest.approx(3 / 6)  # C(3,2)/C(4,2)
    assert all(pass_hat_k(6, 4, k) <= pass_at_k(6, 4, k) for k in range(1, 7))
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_hat_k(3, 1, 0)
