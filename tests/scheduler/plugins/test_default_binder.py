"""DefaultBinder (upstream defaultbinder/default_binder_test.go), through the runtime's Bind."""

from minik3s.api.errors import ConflictError
from minik3s.testing.builders import make_pod
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import Code
from scheduler.framework.types import PodInfo
from scheduler.plugins.default_binder import DefaultBinder


async def test_bind_posts_binding_with_uid(fw):
    run = fw.Run(DefaultBinder, fw.Snapshot([]))
    st = await run.framework.run_bind(CycleState(), PodInfo(make_pod("p").obj()), "n1")
    assert st.is_success()
    assert run.client.calls == [("bind", "default", "p", "n1", "uid-default-p")]


async def test_bind_error_becomes_error_status(fw):
    run = fw.Run(DefaultBinder, fw.Snapshot([]))
    run.client.fail_bind = ConflictError("pod p is already assigned to node n2")
    st = await run.framework.run_bind(CycleState(), PodInfo(make_pod("p").obj()), "n1")
    assert st.code == Code.ERROR and "already assigned" in st.message()
