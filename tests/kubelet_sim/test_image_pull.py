"""Images a node cannot use, as kubelet v1.33 reports them: `InvalidImageName` for a reference
distribution/reference refuses, `ErrImagePull` then `ImagePullBackOff` (10 s doubling to 300 s,
retried on the re-syncs 10-15 s apart) for an image the simulated registries do not hold, with
upstream's waiting messages and Events; other containers of the pod start; a fixed image starts.

The reference grammar is checked as a table (minik3s.api.helpers.image_reference); the kubelet
runs as StageController + NodeAgent + EventRecorder against the real in-process API on a fake
clock (conftest.py)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from minik3s.api.helpers.image_reference import misspelt_official, reference_error, registry_error
from minik3s.api.resources import PODS

if TYPE_CHECKING:
    from conftest import Kubelets

HUB_MISSING = ("failed to pull and unpack image \"docker.io/library/nginxx:latest\": failed to resolve reference "
               "\"docker.io/library/nginxx:latest\": pull access denied, repository does not exist or may require "
               "authorization: server message: insufficient_scope: authorization failed")


@pytest.mark.parametrize(("image", "error"), [
    ("nginx", None),
    ("nginx:1.27", None),
    ("docker.io/library/nginx:1.27", None),
    ("registry.k8s.io/pause:3.10", None),
    ("localhost:5000/team/app_v2__x--y.z:v1.0-rc_1", None),
    ("[::1]:5000/app:1", None),
    ("nginx@sha256:" + "a" * 64, None),
    ("nginx:1.27@sha256:" + "0" * 64, None),
    ("Foo/bar", None),  # an upper-case first component is a registry host
    ("Nginx:1", "invalid reference format: repository name (library/Nginx) must be lowercase"),
    ("me/App", "invalid reference format: repository name (me/App) must be lowercase"),
    ("localhost:5000/App", "invalid reference format: repository name (App) must be lowercase"),
    ("nginx:", "invalid reference format"),
    ("nginx:-1", "invalid reference format"),
    ("nginx:" + "t" * 129, "invalid reference format"),
    ("-nginx", "invalid reference format"),
    ("ngi__-nx", "invalid reference format"),
    ("nginx@sha256:abc", "invalid reference format"),
    ("nginx@md5:" + "a" * 32, "unsupported digest algorithm"),
    ("nginx@sha256:" + "a" * 63 + "aa", "invalid checksum digest length"),
    ("a" * 64, f"invalid repository name ({'a' * 64}), cannot specify 64-byte hexadecimal strings"),
    ("x/" + "y" * 250, "repository name must not be more than 255 characters"),
])
def test_the_reference_grammar(image: str, error: str | None) -> None:
    got = reference_error(image)
    assert got == (None if error is None else f'couldn\'t parse image name "{image}": {error}')


@pytest.mark.parametrize(("name", "misspelt"), [
    ("nginxx", True), ("ngnix", True), ("busyboxx", True), ("postgress", True), ("reddis", True),
    ("alpne", True), ("nginx", False), ("postgres", False), ("myapp", False), ("app", False),
    ("pause", False), ("controller", False), ("fake-image1", False), ("ab", False),
])
def test_misspelt_official_images(name: str, misspelt: bool) -> None:
    assert misspelt_official(name) is misspelt


def test_the_registries() -> None:
    assert registry_error("nginxx") == HUB_MISSING
    assert registry_error("nginx:does-not-matter") is None  # tags are not known: pulled
    assert registry_error("me/nginxx") is None and registry_error("ghcr.io/x/nginxx:1") is None
    assert registry_error("registry.invalid:5000/team/app:1") == (
        'failed to pull and unpack image "registry.invalid:5000/team/app:1": failed to resolve reference '
        '"registry.invalid:5000/team/app:1": failed to do request: Head '
        '"https://registry.invalid:5000/v2/team/app/manifests/1": dial tcp: lookup registry.invalid: no such host')
    assert registry_error("images.example/app") is not None and registry_error("my.test/app@sha256:" + "b" * 64)


def _state(pod: dict[str, Any], name: str, key: str = "containerStatuses") -> dict[str, Any]:
    return next(cs for cs in pod["status"][key] if cs["name"] == name)


async def test_a_missing_image_pulls_then_backs_off(kubelets: Kubelets) -> None:
    await kubelets.pod("typo", [{"name": "web", "image": "nginxx"}])
    pod = await kubelets.cluster.get(PODS, "typo", "default")
    assert pod["status"]["phase"] == "Pending"
    cs = _state(pod, "web")
    assert cs["state"] == {"waiting": {"reason": "ErrImagePull", "message": HUB_MISSING}}
    assert (cs["image"], cs["imageID"], cs["ready"], cs["restartCount"]) == ("nginxx", "", False, 0)
    assert pod["status"]["podIP"]  # the sandbox is up
    conds = {c["type"]: c for c in pod["status"]["conditions"]}
    assert conds["PodReadyToStartContainers"]["status"] == "True"
    assert (conds["Ready"]["status"], conds["Ready"]["reason"], conds["Ready"]["message"]) == (
        "False", "ContainersNotReady", "containers with unready status: [web]")
    path = "spec.containers{web}"
    assert await kubelets.lines("typo") == [
        (path, "Pulling", 'Pulling image "nginxx"'),
        (path, "Failed", f'Failed to pull image "nginxx": {HUB_MISSING}'),
        (path, "Failed", "Error: ErrImagePull")]
    # the next sync, 10-15 s later, is past the first 10 s window: pulled again; the window is now 20 s
    await kubelets.advance(15.5, step=0.5)
    events = {(e["reason"], e["message"]): e.get("count", 1) for e in await kubelets.events("typo")}
    assert events[("Pulling", 'Pulling image "nginxx"')] == 2
    assert events[("Failed", "Error: ErrImagePull")] == 2
    # the sync after that falls inside the 20 s window: the back-off, with the last error
    await kubelets.advance(15.5, step=0.5)
    cs = _state(await kubelets.cluster.get(PODS, "typo", "default"), "web")
    assert cs["state"] == {"waiting": {"reason": "ImagePullBackOff",
                                       "message": f'Back-off pulling image "nginxx": ErrImagePull: {HUB_MISSING}'}}
    events = {(e["reason"], e["message"]): e.get("count", 1) for e in await kubelets.events("typo")}
    assert events[("BackOff", 'Back-off pulling image "nginxx"')] >= 1
    assert events[("Failed", "Error: ImagePullBackOff")] >= 1
    assert all(e["type"] == ("Normal" if e["reason"] in ("Pulling", "BackOff") else "Warning")
               for e in await kubelets.events("typo"))


async def test_pulls_are_retried_on_a_doubling_back_off(kubelets: Kubelets) -> None:
    """Pulls at t=0 and on the first re-sync (10-15 s, past the 10 s window); after that each
    window (20, 40, 80, 160 s) is reported as ImagePullBackOff until the first re-sync past it
    pulls again (ErrImagePull)."""
    await kubelets.pod("typo", [{"name": "web", "image": "nginxx"}])
    start = kubelets.clock.monotonic()
    reasons: list[tuple[float, str]] = []
    while kubelets.clock.monotonic() - start < 460:
        await kubelets.advance(1.0, step=1.0)
        cs = _state(await kubelets.cluster.get(PODS, "typo", "default"), "web")
        reason = cs["state"]["waiting"]["reason"]
        if not reasons or reasons[-1][1] != reason:
            reasons.append((kubelets.clock.monotonic() - start, reason))
    assert reasons[0][1] == "ErrImagePull" and reasons[1][1] == "ImagePullBackOff"
    assert 20 <= reasons[1][0] <= 31  # the second re-sync, inside the 20 s window opened by the second pull
    pulls = [t for t, r in reasons if r == "ErrImagePull"][1:]
    gaps = [b - a for a, b in zip(pulls, pulls[1:], strict=False)]
    assert len(gaps) >= 3, reasons
    for gap, window in zip(gaps, (40, 80, 160), strict=False):
        assert window <= gap <= window + 16, reasons


async def test_an_invalid_name_is_refused_on_every_sync_without_a_pull(kubelets: Kubelets) -> None:
    await kubelets.pod("bad", [{"name": "c", "image": "Nginx:1"}])
    message = ('Failed to apply default image tag "Nginx:1": couldn\'t parse image name "Nginx:1": '
               "invalid reference format: repository name (library/Nginx) must be lowercase")
    cs = _state(await kubelets.cluster.get(PODS, "bad", "default"), "c")
    assert cs["state"] == {"waiting": {"reason": "InvalidImageName", "message": message}}
    await kubelets.advance(31, step=0.5)
    lines = {(e["reason"], e["message"]): e.get("count", 1) for e in await kubelets.events("bad")}
    assert set(lines) == {("InspectFailed", message), ("Failed", "Error: InvalidImageName")}
    assert lines[("InspectFailed", message)] >= 3  # every 10-15 s


async def test_the_other_containers_start_and_a_fixed_image_starts(kubelets: Kubelets) -> None:
    await kubelets.pod("mixed", [{"name": "web", "image": "nginx:1.27"}, {"name": "side", "image": "nginxx:2"}])
    pod = await kubelets.cluster.get(PODS, "mixed", "default")
    assert pod["status"]["phase"] == "Running"
    assert "running" in _state(pod, "web")["state"]
    assert _state(pod, "side")["state"]["waiting"]["reason"] == "ErrImagePull"
    assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"] == "False"
    # `kubectl set image pod/mixed side=nginx:1.27`: tried at once, started
    pod["spec"]["containers"][1]["image"] = "nginx:1.27"
    await kubelets.cluster.update(PODS, pod)
    await kubelets.advance(0.5)
    pod = await kubelets.cluster.get(PODS, "mixed", "default")
    assert "running" in _state(pod, "side")["state"]
    assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"] == "True"
    assert ("spec.containers{side}", "Started", "Started container side") in await kubelets.lines("mixed")


async def test_an_init_container_image_holds_the_pod(kubelets: Kubelets) -> None:
    await kubelets.pod("init", [{"name": "app", "image": "nginx:1.27"}],
                       init=[{"name": "setup", "image": "registry.invalid/tools:1"}])
    pod = await kubelets.cluster.get(PODS, "init", "default")
    assert pod["status"]["phase"] == "Pending"
    assert _state(pod, "setup", "initContainerStatuses")["state"]["waiting"]["reason"] == "ErrImagePull"
    assert _state(pod, "app")["state"] == {"waiting": {"reason": "PodInitializing"}}
    conds = {c["type"]: c for c in pod["status"]["conditions"]}
    assert (conds["Initialized"]["status"], conds["Initialized"]["message"]) == (
        "False", "containers with incomplete status: [setup]")
    await kubelets.advance(30, step=0.5)
    pod = await kubelets.cluster.get(PODS, "init", "default")
    assert pod["status"]["phase"] == "Pending"
    assert _state(pod, "setup", "initContainerStatuses")["state"]["waiting"]["reason"] in (
        "ErrImagePull", "ImagePullBackOff")
    assert ("spec.initContainers{setup}", "Failed", "Error: ErrImagePull") in await kubelets.lines("init")


async def test_an_ephemeral_container_with_a_missing_image_waits(kubelets: Kubelets) -> None:
    """`kubectl debug web --image=busyboxx`: the ephemeral container waits in ErrImagePull, then
    ImagePullBackOff; the pod's own container runs on."""
    await kubelets.pod("web", [{"name": "c", "image": "nginx:1.27"}])
    pod = await kubelets.cluster.get(PODS, "web", "default")
    pod["spec"]["ephemeralContainers"] = [{"name": "debugger", "image": "busyboxx", "stdin": True, "tty": True}]
    await kubelets.cluster.update(PODS, pod, subresource="ephemeralcontainers")
    await kubelets.advance(0.5)
    pod = await kubelets.cluster.get(PODS, "web", "default")
    cs = _state(pod, "debugger", "ephemeralContainerStatuses")
    assert cs["state"]["waiting"]["reason"] == "ErrImagePull"
    assert "busyboxx" in cs["state"]["waiting"]["message"] and "containerID" not in cs
    assert "running" in _state(pod, "c")["state"]
    assert ("spec.ephemeralContainers{debugger}", "Failed", "Error: ErrImagePull") in await kubelets.lines("web")
    await kubelets.advance(31, step=0.5)
    cs = _state(await kubelets.cluster.get(PODS, "web", "default"), "debugger", "ephemeralContainerStatuses")
    assert cs["state"]["waiting"]["reason"] in ("ErrImagePull", "ImagePullBackOff")
    assert any(line[1] == "BackOff" for line in await kubelets.lines("web"))


async def test_a_blocked_container_leaves_a_crash_loop_beside_it_alone(kubelets: Kubelets) -> None:
    """The image re-syncs rewrite only the blocked container (never started: its image is not
    on the node for it): a crash-looping container beside it waits out each back-off (10 s,
    20 s, 40 s) before it runs again."""
    await kubelets.pod("both", [{"name": "crash", "image": "nginx:1.25", "command": ["sh", "-c", "exit 2"]},
                                {"name": "side", "image": "nginxx:2"}])
    start = kubelets.clock.monotonic()
    seen: list[tuple[float, int, str]] = []  # (when, restartCount, back-off message) as they change
    while kubelets.clock.monotonic() - start < 100:
        await kubelets.advance(0.5, step=0.5)
        pod = await kubelets.cluster.get(PODS, "both", "default")
        side = _state(pod, "side")
        assert side["state"].get("waiting", {}).get("reason") in ("ErrImagePull", "ImagePullBackOff"), side
        assert "containerID" not in side and side["restartCount"] == 0
        crash = _state(pod, "crash")
        waiting = crash["state"].get("waiting") or {}
        if waiting.get("reason") == "CrashLoopBackOff" and (not seen or seen[-1][1] != crash["restartCount"]):
            seen.append((kubelets.clock.monotonic() - start, crash["restartCount"], waiting["message"]))
    units = {"h": 3600, "m": 60, "s": 1}
    periods = [sum(int(n) * units[u] for n, u in re.findall(r"(\d+)([hms])", m.split()[1])) for _, _, m in seen]
    assert periods[:3] == [10, 20, 40], seen
    for (t0, _, _), (t1, _, _), period in zip(seen, seen[1:], periods, strict=False):
        assert t1 - t0 >= period - 1, seen  # each restart waited out its back-off (0.5 s samples)


async def test_a_blocked_pod_is_deleted_as_any_other(kubelets: Kubelets) -> None:
    await kubelets.pod("gone", [{"name": "c", "image": "nginxx"}])
    await kubelets.cluster.delete(PODS, "gone", "default", grace_period_seconds=30)
    await kubelets.advance(3, step=0.5)
    names = [p["metadata"]["name"] for p in (await kubelets.cluster.list(PODS, "default"))["items"]]
    assert "gone" not in names


async def test_the_log_of_a_container_waiting_on_its_image(kubelets: Kubelets, real_api: Any) -> None:
    """pods/log answers as the kubelet's validateContainerLogStatus: ErrImagePull "image can't be
    pulled", ImagePullBackOff "trying and failing to pull image", others by their reason."""
    from apiserver.strategies.pod_rest import LogREST
    from minik3s.api.errors import BadRequestError

    await kubelets.pod("typo", [{"name": "web", "image": "nginxx"}])
    await kubelets.pod("bad", [{"name": "c", "image": "Nginx:1"}])

    def log_error(name: str) -> str:
        with pytest.raises(BadRequestError) as err:
            LogREST().plan(real_api.core, PODS, "default", name, {})
        return str(err.value)

    assert log_error("typo") == 'container "web" in pod "typo" is waiting to start: image can\'t be pulled'
    assert log_error("bad") == 'container "c" in pod "bad" is waiting to start: InvalidImageName'
    await kubelets.advance(31, step=0.5)  # inside the 20 s window the second pull opened
    assert log_error("typo") == 'container "web" in pod "typo" is waiting to start: trying and failing to pull image'
