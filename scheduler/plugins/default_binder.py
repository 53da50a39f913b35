"""DefaultBinder (Bind): POST pods/{name}/binding with the pod's UID as precondition (upstream
plugins/defaultbinder). API errors become an Error status; the runtime forgets the assumed pod."""

from __future__ import annotations

import asyncio
import logging

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import BindPlugin, Status
from scheduler.framework.types import PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS

logger = logging.getLogger(__name__)


class DefaultBinder(BindPlugin):
    NAME = names.DEFAULT_BINDER

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        assert self.handle is not None, "DefaultBinder needs a handle with a client"
        logger.debug("binding pod=%s node=%s", pod.key, node_name)
        try:
            await self.handle.client.bind(pod.namespace, pod.name, node_name, uid=pod.uid or None)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - an API failure is this plugin's expected outcome
            return Status.as_error(e, plugin=self.NAME)
        return SUCCESS
