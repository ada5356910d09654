"""The tests compare hwcrypt with ``cryptography`` (a test dependency).
Run them once per ``HWCRYPT_CPU`` setting (unset, ``-vaes``, ``none``):
``.ci/steps/90-python.sh`` does."""

import os
import random

import pytest


@pytest.fixture
def rng():
    seed = int(os.environ.get("HWCRYPT_TEST_SEED", "1234"))
    return random.Random(seed)


def rbytes(rng, n):
    return rng.randbytes(n)
