"""The engine's latency mixtures: a certain delay (a sleep, an injected delay) is a floor no draw goes under."""

import random

import pytest

from pytest_itbench.twin.workload.latency import Mixture


def test_a_shifted_lognormal_is_never_drawn_below_its_shift():
    own = Mixture.lognormal(0.0005, 0.4).shift(1.0)
    rng = random.Random(7)
    draws = [own.sample(rng) for _ in range(20000)]
    assert min(draws) >= 1.0
    assert own.cdf(0.9999) == 0.0 and own.cdf(1.01) == pytest.approx(1.0)
    assert sum(draws) / len(draws) == pytest.approx(own.mean, rel=1e-4)


def test_floors_add_in_sums_and_the_lower_one_survives_a_merge():
    slow = Mixture.lognormal(0.003, 0.4).shift(0.1)
    total = slow.plus(Mixture.point(0.05))
    assert min(total.sample(random.Random(s)) for s in range(2000)) >= 0.15
    merged = Mixture.mix([(0.5, Mixture.point(0.2)), (0.5, Mixture.point(0.4))])
    assert merged.cdf(0.199) == 0.0 and merged.mean == pytest.approx(0.3)
    for count in (2, 2.5, 7):  # exact sums and the moment-kept ones
        assert merged.times(count).cdf(0.2 * count - 1e-6) == 0.0


def test_a_split_keeps_the_floor_of_what_stays_under_the_cut():
    mixture = Mixture.mix([(0.9, Mixture.lognormal(0.01, 0.3).shift(0.5)), (0.1, Mixture.point(15.0))])
    above, below = mixture.split_at(10.0)
    assert above == pytest.approx(0.1)
    assert below.cdf(0.4999) == 0.0 and below.quantile(0.99) < 1.0
