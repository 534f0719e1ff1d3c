"""The population loss of the torch model as a count table (lagtheory.count_table), against the closed
forms of lagtheory.population (book eq. eq-population-loss, eq-grad-u, eq-grad-t)."""

import numpy as np
import pytest
import torch

from lagtheory import Data, Geometric, population
from lagtheory.count_table import population_table
from lagtheory.model import ShallowTransformer
from lagtheory.sampled import batch_loss


@pytest.mark.parametrize("prior", [0.5, 0.3])
@pytest.mark.parametrize("theta,u", [((0.0, 0.0), (0.0, 0.0)), ((0.2, 1.3), (-0.8, 1.7)), ((-1.0, 0.4), (2.5, -30.0))])
def test_torch_population_loss_matches_closed_forms(prior, theta, u):
    exact = population(theta, u, Data(Geometric(4.0), prior=prior, tol=1e-14))
    n = np.arange(1, exact.truncation_length + 1, dtype=float)
    weight = 0.25 * 0.75 ** (n - 1)  # eq-geometric, mean 4, written out
    model = ShallowTransformer()
    with torch.no_grad():
        model.theta.copy_(torch.tensor(theta, dtype=torch.float64))
        model.u.copy_(torch.tensor(u, dtype=torch.float64))
    loss = batch_loss(model, *population_table(n, np.ones_like(n), weight, prior))
    loss.backward()
    assert loss.item() == pytest.approx(exact.loss, abs=1e-13)
    np.testing.assert_allclose(model.theta.grad.numpy(), exact.grad_theta, rtol=0, atol=1e-13)
    np.testing.assert_allclose(model.u.grad.numpy(), exact.grad_u, rtol=0, atol=1e-13)


def test_table_rows():
    counts, labels, weights = population_table([3.0, 3.0], [1.0, 2.0], [0.25, 0.75], prior=0.4)
    assert counts.tolist() == [[2.0, 1.0], [1.0, 2.0], [1.0, 0.0]]
    assert labels.tolist() == [1.0, 1.0, -1.0]
    np.testing.assert_allclose(weights.numpy(), [0.1, 0.3, 0.6], rtol=0, atol=1e-16)


@pytest.mark.parametrize(
    "args,match",
    [
        (([2.0], [0.0], [1.0]), "k must be whole numbers >= 1"),
        (([2.0], [3.0], [1.0]), "0 <= k <= n"),
        (([2.0, 3.0], [1.0], [1.0, 1.0]), "one shape"),
        (([2.0], [1.0], [-1.0]), "weight must be >= 0"),
    ],
)
def test_bad_tables_are_refused(args, match):
    with pytest.raises(ValueError, match=match):
        population_table(*args)
