"""DefaultBinder (upstream defaultbinder/default_binder_test.go), through the runtime's Bind, against
the real in-process API (`real_api`): the binding subresource sets spec.nodeName, checks the UID
precondition and refuses a second binding."""

from minik3s.api.resources import PODS
from minik3s.testing.builders import make_pod
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import Code
from scheduler.framework.types import PodInfo
from scheduler.plugins.default_binder import DefaultBinder


async def _pending_pod(real_api):
    pod = make_pod("p").obj()
    pod["metadata"].pop("uid", None)  # the API assigns it
    return await real_api.create(PODS, pod)


async def test_bind_posts_binding_with_uid(fw, real_api):
    pod = await _pending_pod(real_api)
    run = fw.Run(DefaultBinder, fw.Snapshot([]), client=real_api)
    st = await run.framework.run_bind(CycleState(), PodInfo(pod), "n1")
    assert st.is_success(), st
    assert real_api.calls[-1] == ("bind", "pods", "default/p", "n1")
    assert real_api.obj(PODS, "p", "default")["spec"]["nodeName"] == "n1"


async def test_bind_of_an_assigned_pod_is_an_error_status(fw, real_api):
    pod = await _pending_pod(real_api)
    await real_api.bind("default", "p", "n2")
    run = fw.Run(DefaultBinder, fw.Snapshot([]), client=real_api)
    st = await run.framework.run_bind(CycleState(), PodInfo(pod), "n1")
    assert st.code == Code.ERROR
    assert 'pod p is already assigned to node "n2"' in st.message()
    assert real_api.obj(PODS, "p", "default")["spec"]["nodeName"] == "n2"


async def test_bind_with_a_stale_uid_is_an_error_status(fw, real_api):
    old = await _pending_pod(real_api)
    await real_api.delete(PODS, "p", "default", grace_period_seconds=0)
    await _pending_pod(real_api)  # same name, new UID
    run = fw.Run(DefaultBinder, fw.Snapshot([]), client=real_api)
    st = await run.framework.run_bind(CycleState(), PodInfo(old), "n1")
    assert st.code == Code.ERROR and "UID" in st.message(), st.message()
    assert "nodeName" not in real_api.obj(PODS, "p", "default")["spec"]
