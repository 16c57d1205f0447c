"""The bench's agreement measures against the fp32 baseline."""

from __future__ import annotations

import pytest

from ragway_tools.training.rerank_bench import kendall_tau, ndcg_against


def test_kendall_tau_is_one_for_the_same_order_and_minus_one_reversed() -> None:
    assert kendall_tau([3.0, 2.0, 1.0], [30.0, 20.0, 10.0]) == 1.0
    assert kendall_tau([3.0, 2.0, 1.0], [1.0, 2.0, 3.0]) == -1.0
    assert kendall_tau([3.0, 2.0, 1.0], [3.0, 1.0, 2.0]) == pytest.approx(1 / 3)
    assert kendall_tau([1.0], [5.0]) == 1.0


def test_ndcg_against_the_reference_order() -> None:
    reference = [0.9, 0.1, 0.5, 0.3, -1.0, -2.0]
    assert ndcg_against(reference, [x * 2 + 1 for x in reference]) == pytest.approx(1.0)
    swapped = [0.1, 0.9, 0.5, 0.3, -1.0, -2.0]  # the top two swapped
    assert 0.8 < ndcg_against(reference, swapped) < 1.0
    # Below the cut-off the order does not count.
    assert ndcg_against(
        [*reference, -3.0], [0.9, 0.1, 0.5, 0.3, -1.0, -3.0, -2.0]
    ) == pytest.approx(1.0)
