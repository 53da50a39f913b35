"""Calling the matching webhooks of one request (layer L4, apiserver.webhooks): upstream's
mutating dispatcher (serial, JSON patches applied in order, reinvocationPolicy IfNeeded) and
validating dispatcher (in parallel, first denial wins).

Rules, in upstream's order, for each webhook (generic/webhook.go ShouldCallHook, dispatchers):
1. namespaceSelector, objectSelector, then the rules (with matchPolicy Equivalent, another
   served version of the same resource may match; the object is then sent converted to it).
2. matchConditions (CEL, apiserver.cel) in order over object / oldObject / request: the first
   false one skips the webhook; failures with none false refuse the request under failurePolicy
   Fail (403 Forbidden naming each failed expression) and skip the webhook under Ignore.
3. A dry-run request reaches only webhooks with sideEffects None / NoneOnDryRun; any other
   refuses it: `admission webhook "<name>" does not support dry run` (400).
4. A failed call (transport error, timeout, bad TLS, malformed answer): failurePolicy Ignore
   goes on without it; Fail answers 500 `Internal error occurred: failed calling webhook ...`.
5. `allowed: false` -> the webhook's Status as upstream's ToStatusErr (code >= 400).
6. Mutating: the patch is applied to the object (500 when it does not apply); an IfNeeded
   webhook is called once more if a later webhook changed the object after it ran.
Every webhook's warnings are added to the response's Warning headers.

Data flow: core -> mutate(attrs) / validate(attrs) -> source (compiled webhooks) -> rules ->
call (HTTPS) -> attrs.obj replaced by the patched object, or an ApiError raised.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from apiserver import cel
from apiserver.patch import PatchError
from apiserver.patch.json_patch import apply_json_patch
from apiserver.storage.interface import Store
from apiserver.strategies import strategy_for_resource
from apiserver.webhooks.attributes import Attributes
from apiserver.webhooks.call import (
    CallingWebhookError,
    PatchDecodeError,
    WebhookResponse,
    admission_request,
    post_review,
    rejection,
    resolve,
    review_request,
    review_version,
    verify_response,
)
from apiserver.webhooks.policy import PolicyAdmission, PolicySource
from apiserver.webhooks.rules import exempt, matched_resource, namespace_labels, object_selector_matches
from apiserver.webhooks.source import Webhook, WebhookSource
from minik3s.api import errors
from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

__all__ = ["Attributes", "WebhookAdmission"]

def internal(message: str) -> errors.InternalError:
    """apierrors.NewInternalError(err)."""
    return errors.InternalError(f"Internal error occurred: {message}", details={"causes": [{"message": message}]})


@dataclass(slots=True)
class _Invocation:
    hook: Webhook
    resource: ResourceInfo  # the version the webhook is called with


class WebhookAdmission:
    """The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins over the store's
    configurations. `mutate` / `validate` return at once when no configuration exists."""

    __slots__ = ("_policies", "_registry", "_rng", "_source", "_store")

    def __init__(self, store: Store, registry: ResourceRegistry, *, rng: random.Random | None = None,
                 generation: Callable[[], int] | None = None) -> None:
        self._store = store
        self._registry = registry
        self._rng = rng or random.Random()
        # generation(): committed configuration writes so far (None: look at the store each time)
        self._source = WebhookSource(store, generation)
        # ValidatingAdmissionPolicies, evaluated in process before the validating webhooks
        self._policies = PolicyAdmission(store, registry, PolicySource(store, generation),
                                         equivalents=self._equivalents, convert=self._convert_to,
                                         namespace=self._namespace)

    def active(self) -> bool:
        """Whether any webhook configuration or policy binding exists (the per-write fast path:
        an integer comparison while no admission configuration was written)."""
        return self._source.any() or self._policies.active()

    # ------------------------------------------------------------------ matching
    def _equivalents(self, info: ResourceInfo) -> list[ResourceInfo]:
        return [r for r in self._registry.all()
                if r.group == info.group and r.resource == info.resource and r.version != info.version]

    def _namespace(self, attrs: Attributes) -> JsonDict | None:
        return self._store.get(f"core/namespaces//{attrs.namespace}") if attrs.namespace else None

    def _invocation(self, hook: Webhook, attrs: Attributes) -> _Invocation | None:
        """ShouldCallHook: selectors, rules, then matchConditions; raises for a namespace that
        does not exist (when the selector needs its labels) and for matchConditions under Fail."""
        ns_error: errors.ApiError | None = None
        scoped = bool(attrs.namespace) or attrs.is_namespace
        if scoped and not hook.namespace_selector.empty:
            labels = namespace_labels(attrs, self._namespace(attrs))
            if labels is None:
                ns_error = errors.not_found("namespaces", "", attrs.namespace)
            elif not hook.namespace_selector.matches(labels):
                return None
        if not object_selector_matches(hook.object_selector, attrs):
            return None
        matched = matched_resource(hook.rules, hook.match_policy, attrs, self._equivalents(attrs.info))
        if matched is None:
            return None
        if ns_error is not None:
            raise ns_error
        inv = _Invocation(hook, matched)
        if hook.has_match_conditions and not self._conditions_match(inv, attrs):
            return None
        if attrs.dry_run and hook.side_effects not in ("None", "NoneOnDryRun"):
            raise errors.BadRequestError(f"admission webhook {_q(hook.name)} does not support dry run")
        return inv

    def _conditions_match(self, inv: _Invocation, attrs: Attributes) -> bool:
        """upstream's matchconditions matcher (`cel.match_conditions`) over `object`,
        `oldObject` (in the version the webhook is called with) and `request`: a false
        condition skips the webhook; failures with none false refuse the request under
        failurePolicy Fail (403, every failure named) and skip the webhook under Ignore."""
        hook = inv.hook
        variables = cel.Variables({"object": self._convert_out(inv, attrs, attrs.obj),
                                   "oldObject": self._convert_out(inv, attrs, attrs.old),
                                   "request": admission_request(attrs, inv.resource)})
        matched, failures = cel.match_conditions([e for _, e in hook.match_conditions], variables)
        if not matched:
            logger.debug("webhook skipped by a matchCondition webhook=%s", hook.name)
            return False
        if not failures:
            return True
        if hook.failure_policy == "Ignore":
            logger.info("webhook skipped: matchConditions failed webhook=%s errors=%s", hook.name, failures)
            return False
        logger.warning("failed evaluating match conditions, failing closed webhook=%s errors=%s", hook.name, failures)
        raise errors.forbidden(attrs.info.resource, attrs.info.group, attrs.name, errors.aggregate(failures))

    # ------------------------------------------------------------------ calling
    def _services(self, namespace: str, name: str) -> tuple[JsonDict | None, JsonDict | None]:
        return (self._store.get(f"core/services/{namespace}/{name}"),
                self._store.get(f"core/endpoints/{namespace}/{name}"))

    def _convert_out(self, inv: _Invocation, attrs: Attributes, obj: JsonDict | None) -> JsonDict | None:
        return self._convert_to(inv.resource, attrs, obj)

    @staticmethod
    def _convert_to(resource: ResourceInfo, attrs: Attributes, obj: JsonDict | None) -> JsonDict | None:
        """`obj` (stored as attrs.info) in the version `resource` names."""
        if obj is None or resource is attrs.info:
            return obj
        return strategy_for_resource(resource).convert_from_storage(resource.version, obj)

    async def _call(self, inv: _Invocation, attrs: Attributes) -> WebhookResponse:
        hook = inv.hook
        uid = uuid.UUID(int=self._rng.getrandbits(128), version=4)
        version = review_version(hook)
        body = review_request(attrs, inv.resource, uid=uid, version=version,
                              obj=self._convert_out(inv, attrs, attrs.obj),
                              old=self._convert_out(inv, attrs, attrs.old))
        target = resolve(hook, self._services)
        answer = await post_review(hook, target, body)
        return verify_response(hook, uid, version, answer)

    async def _call_policy(self, inv: _Invocation, attrs: Attributes) -> WebhookResponse | None:
        """The answer, or None when the call failed and failurePolicy is Ignore."""
        try:
            resp = await self._call(inv, attrs)
        except CallingWebhookError as e:
            if inv.hook.failure_policy == "Ignore":
                logger.warning("failed calling webhook, failing open webhook=%s error=%s", inv.hook.name, e.reason)
                return None
            logger.warning("failed calling webhook, failing closed webhook=%s error=%s", inv.hook.name, e.reason)
            raise internal(str(e)) from None
        except PatchDecodeError as e:
            raise internal(str(e)) from None
        attrs.warnings.extend(resp.warnings)
        if not resp.allowed:
            raise rejection(inv.hook.name, resp.status)
        return resp

    def _apply_patch(self, inv: _Invocation, attrs: Attributes, patch: list[object]) -> bool:
        """Apply a mutating webhook's patch to attrs.obj (in the version it saw); True when the
        object changed."""
        cur = attrs.obj
        if cur is None:
            raise internal(f"admission webhook {_q(inv.hook.name)} returned a patch for a request without an object")
        seen = self._convert_out(inv, attrs, cur)
        assert seen is not None
        try:
            out = apply_json_patch(seen, patch)
        except PatchError as e:
            raise internal(str(e.to_api_error().message)) from None
        if not isinstance(out, dict) or not isinstance(out.get("metadata", {}), dict):
            raise internal("the patched object is not an object")
        if inv.resource is not attrs.info:
            out = strategy_for_resource(inv.resource).convert_to_storage(inv.resource.version, out)
        if attrs.object_kind is None:
            out["apiVersion"], out["kind"] = attrs.info.api_version, attrs.info.kind
        else:
            out["apiVersion"], out["kind"] = cur.get("apiVersion"), cur.get("kind")
        if out == cur:
            return False
        attrs.obj = out
        return True

    # ------------------------------------------------------------------ the two plugins
    async def mutate(self, attrs: Attributes) -> bool:
        """Run the matching mutating webhooks in order; True when attrs.obj was replaced."""
        if exempt(attrs.info):
            return False
        hooks = self._source.mutating()
        if not hooks:
            return False
        changed = False
        ran_if_needed: list[Webhook] = []
        reinvoke: set[int] = set()
        for hook in hooks:
            inv = self._invocation(hook, attrs)
            if inv is None:
                continue
            resp = await self._call_policy(inv, attrs)
            if resp is not None and resp.patch and self._apply_patch(inv, attrs, resp.patch):
                changed = True
                # every IfNeeded webhook that ran before this change sees the object again
                reinvoke.update(id(h) for h in ran_if_needed if h is not hook)
            if hook.reinvocation_policy == "IfNeeded":
                ran_if_needed.append(hook)
        if reinvoke:
            for hook in hooks:
                if id(hook) not in reinvoke:
                    continue
                inv = self._invocation(hook, attrs)
                if inv is None:
                    continue
                resp = await self._call_policy(inv, attrs)
                if resp is not None and resp.patch and self._apply_patch(inv, attrs, resp.patch):
                    changed = True
        return changed

    async def validate(self, attrs: Attributes) -> None:
        """The ValidatingAdmissionPolicies (apiserver.webhooks.policy), then the matching
        validating webhooks concurrently; raise the first refusal (in the webhooks' order)."""
        if exempt(attrs.info):
            return
        self._policies.validate(attrs)
        hooks = self._source.validating()
        if not hooks:
            return
        invocations = [inv for inv in (self._invocation(h, attrs) for h in hooks) if inv is not None]
        if not invocations:
            return
        results = await asyncio.gather(*(self._call_policy(inv, attrs) for inv in invocations),
                                       return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
