"""Generated object names (layer L2): apiserver's SimpleNameGenerator, a prefix and five random
characters from an alphabet without vowels (no words) and without look-alikes (0/o, 1/l)."""

from __future__ import annotations

import random

GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_LENGTH = 5


def generate_name(prefix: str, rng: random.Random) -> str:
    """`prefix` followed by five random characters (metadata.generateName, kube-api-access-*)."""
    return prefix + "".join(rng.choice(GENERATE_ALPHABET) for _ in range(RANDOM_LENGTH))
