"""The simulated kubelet's container Events, as kubelet v1.33 reports them: `Pulling` while the
sandbox is created, `Pulled` (pulled in <duration>, or already present on the node), `Created`,
`Started` per container as it starts, `Killing` per running container when the pod is deleted;
each about the pod with the container's fieldPath, from source {kubelet, <node>}.

Runs the StageController with its EventRecorder against the real in-process API on a fake clock
(conftest.py); the Events asserted are the ones the API stores."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelet_sim.events import killing_events, pulling_events, started_events
from minik3s.api.resources import PODS

if TYPE_CHECKING:  # the harness lives in conftest.py (shared with test_image_pull.py)
    from conftest import Kubelets


async def test_a_first_start_pulls_creates_and_starts_with_upstreams_lines(kubelets: Kubelets) -> None:
    made = await kubelets.pod("web", [{"name": "c", "image": "nginx:1.25"}], startup_seconds="2",
                              image_size="5Mi")
    assert await kubelets.lines("web") == [("spec.containers{c}", "Pulling", 'Pulling image "nginx:1.25"')]
    await kubelets.advance(2.0)
    assert await kubelets.lines("web") == [
        ("spec.containers{c}", "Pulling", 'Pulling image "nginx:1.25"'),
        ("spec.containers{c}", "Pulled",
         'Successfully pulled image "nginx:1.25" in 2s (2s including waiting). Image size: 5242880 bytes.'),
        ("spec.containers{c}", "Created", "Created container: c"),
        ("spec.containers{c}", "Started", "Started container c"),
    ]
    ev = (await kubelets.events("web"))[-1]
    assert ev["source"] == {"component": "kubelet", "host": "node-1"}
    assert ev["reportingComponent"] == "kubelet" and ev["reportingInstance"] == "node-1"
    assert ev["type"] == "Normal" and ev["count"] == 1 and ev["firstTimestamp"] == ev["lastTimestamp"]
    ref = ev["involvedObject"]
    assert ref["kind"] == "Pod" and ref["apiVersion"] == "v1" and ref["namespace"] == "default"
    assert ref["name"] == "web" and ref["uid"] == made["metadata"]["uid"] and ref["resourceVersion"]


async def test_an_image_on_the_node_is_already_present_unless_the_policy_is_always(kubelets: Kubelets) -> None:
    await kubelets.pod("first", [{"name": "c", "image": "nginx:1.25"}])
    await kubelets.pod("second", [{"name": "c", "image": "nginx:1.25"}])
    assert await kubelets.lines("second") == [
        ("spec.containers{c}", "Pulled", 'Container image "nginx:1.25" already present on machine'),
        ("spec.containers{c}", "Created", "Created container: c"),
        ("spec.containers{c}", "Started", "Started container c"),
    ]
    # declared in the node's status.images: present from the start
    await kubelets.pod("cache", [{"name": "r", "image": "redis:7"}], node="node-2")
    assert [r for _, r, _ in await kubelets.lines("cache")] == ["Pulled", "Created", "Started"]
    # an untagged image defaults to imagePullPolicy Always: pulled every time
    await kubelets.pod("latest-1", [{"name": "b", "image": "example.com/agent"}])
    await kubelets.pod("latest-2", [{"name": "b", "image": "example.com/agent"}])
    assert [r for _, r, _ in await kubelets.lines("latest-2")] == ["Pulling", "Pulled", "Created", "Started"]
    assert (await kubelets.lines("latest-2"))[1][2].startswith('Successfully pulled image "example.com/agent" in ')


async def test_init_containers_come_first_and_a_shared_image_is_pulled_once(kubelets: Kubelets) -> None:
    await kubelets.pod("app", [{"name": "main", "image": "example.com/app:2"},
                               {"name": "side", "image": "example.com/app:2"}],
                       init=[{"name": "setup", "image": "example.com/tools:1"}])
    lines = await kubelets.lines("app")
    assert [(p, r) for p, r, _ in lines] == [
        ("spec.initContainers{setup}", "Pulling"), ("spec.containers{main}", "Pulling"),
        ("spec.initContainers{setup}", "Pulled"), ("spec.initContainers{setup}", "Created"),
        ("spec.initContainers{setup}", "Started"),
        ("spec.containers{main}", "Pulled"), ("spec.containers{main}", "Created"), ("spec.containers{main}", "Started"),
        ("spec.containers{side}", "Pulled"), ("spec.containers{side}", "Created"), ("spec.containers{side}", "Started"),
    ]
    assert lines[8][2] == 'Container image "example.com/app:2" already present on machine'


async def test_deletion_stops_each_running_container_once(kubelets: Kubelets) -> None:
    await kubelets.pod("bye", [{"name": "a", "image": "nginx:1.25"}, {"name": "b", "image": "nginx:1.25"}])
    await kubelets.cluster.delete(PODS, "bye", "default", grace_period_seconds=30)
    await kubelets.cluster.settle()
    killing = [(p, m) for p, r, m in await kubelets.lines("bye") if r == "Killing"]
    assert killing == [("spec.containers{a}", "Stopping container a"), ("spec.containers{b}", "Stopping container b")]
    await kubelets.advance(2.0)  # shutdown-seconds default 1: the containers exit, the kubelet confirms
    assert kubelets.cluster.obj(PODS, "bye", "default") is None
    killing = [r for _, r, _ in await kubelets.lines("bye") if r == "Killing"]
    assert killing == ["Killing", "Killing"]


async def test_a_restart_reports_the_start_again(kubelets: Kubelets) -> None:
    await kubelets.pod("crash", [{"name": "c", "image": "nginx:1.25"}], run_seconds="1", exit_code="1")
    await kubelets.advance(1.0)
    events = await kubelets.events("crash")
    # the repeated Created/Started are counted on the first ones (kubectl: "(x2 over 1s)"), as
    # the kubelet's event correlator does; the second Pulled says something new
    counts = {(e["reason"], e["message"]): e["count"] for e in events}
    assert counts[("Started", "Started container c")] == 2
    assert counts[("Created", "Created container: c")] == 2
    assert counts[("Pulled", 'Container image "nginx:1.25" already present on machine')] == 1
    assert len([e for e in events if e["reason"] == "Started"]) == 1
    started = next(e for e in events if e["reason"] == "Started")
    assert started["lastTimestamp"] > started["firstTimestamp"]


async def test_a_crash_loop_reports_back_off_once_per_wait_and_each_restart(kubelets: Kubelets) -> None:
    made = await kubelets.pod("loop", [{"name": "c", "image": "nginx:1.25", "command": ["sh", "-c", "exit 2"]}])
    uid = made["metadata"]["uid"]
    back_off = ("spec.containers{c}", "BackOff", f"Back-off restarting failed container c in pod loop_default({uid})")
    lines = await kubelets.lines("loop")
    # started, exited, restarted at once, exited again: now waiting 10 s
    assert lines[-1] == back_off
    ev = next(e for e in await kubelets.events("loop") if e["reason"] == "BackOff")
    assert ev["type"] == "Warning" and ev["count"] == 1
    await kubelets.advance(10.5)  # restarted (Started counted again), exited, waiting 20 s: BackOff counted
    events = {e["reason"]: e for e in await kubelets.events("loop")}
    assert events["BackOff"]["count"] == 2 and events["Started"]["count"] == 3
    await kubelets.advance(15.0)  # still inside the 20 s back-off: nothing new
    again = {e["reason"]: e for e in await kubelets.events("loop")}
    assert again["BackOff"]["count"] == 2 and again["Started"]["count"] == 3


def test_the_pure_functions_follow_the_status_they_are_given() -> None:
    pod = {"spec": {"containers": [{"name": "c", "image": "nginx:1.25", "imagePullPolicy": "Never"}]},
           "status": {"containerStatuses": [{"name": "c", "containerID": "containerd://1",
                                             "state": {"terminated": {"exitCode": 0}}}]}}
    assert pulling_events(pod, lambda _: False) == ([], set())  # Never: nothing is pulled
    assert killing_events(pod) == []  # no running container: nothing to stop
    same = started_events(pod, pod["status"], pod["status"], pulled=set(), pull_seconds=0, image_size=lambda _: 1)
    assert same == []  # the same containerID: no new start
