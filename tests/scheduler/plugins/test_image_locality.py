"""ImageLocality (upstream imagelocality/image_locality_test.go)."""

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.plugins.image_locality import ImageLocality, normalized_image_name

MB = 1024 * 1024


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("nginx", "nginx:latest", id="no-tag"),
        pytest.param("nginx:1.25", "nginx:1.25", id="tagged"),
        pytest.param("reg:5000/app", "reg:5000/app:latest", id="registry-port-not-a-tag"),
    ],
)
def test_normalized_image_name(name, want):
    assert normalized_image_name(name) == want


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        # 2000Mi on 1 of 3 nodes: trunc(2097152000/3) = 699050666 -> 100*(699050666-23Mi)//(1000Mi-23Mi) = 65
        pytest.param(
            make_pod("p").images("big").obj(),
            {"n1": [("big:latest", 2000 * MB)], "n2": [], "n3": []},
            {"n1": 65, "n2": 0, "n3": 0},
            id="big-image-on-one-node",
        ),
        # n1: 40Mi on 1 of 2 nodes counts 20Mi + 300Mi on both counts 300Mi; n2: 300Mi
        pytest.param(
            make_pod("p").images("gcr.io/40", "gcr.io/300").obj(),
            {
                "n1": [("gcr.io/40:latest", 40 * MB), ("gcr.io/300:latest", 300 * MB)],
                "n2": [("gcr.io/300:latest", 300 * MB)],
            },
            {
                "n1": 100 * (320 * MB - 23 * MB) // (2000 * MB - 23 * MB),
                "n2": 100 * (300 * MB - 23 * MB) // (2000 * MB - 23 * MB),
            },
            id="spread-scaled-sum",
        ),
        pytest.param(
            make_pod("p").images("small").obj(),
            {"n1": [("small:latest", 10 * MB)]},
            {"n1": 0},
            id="below-min-threshold",
        ),
        pytest.param(
            make_pod("p").images("huge:1").obj(),
            {"n1": [("huge:1", 3000 * MB)]},
            {"n1": 100},
            id="above-max-threshold-capped",
        ),
    ],
)
def test_score(fw, pod, nodes, want):
    snap = fw.Snapshot([make_node(n).images(*imgs).obj() for n, imgs in nodes.items()])
    assert fw.score_nodes(ImageLocality, pod, snap) == want
