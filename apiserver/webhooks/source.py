"""The webhook configurations, read from the store and compiled once per resourceVersion
(layer L4, apiserver.webhooks).

Why: upstream's webhook source is an informer over the configurations; here the store's
memory is the informer. A write costs one integer comparison while no configuration was
written (the configuration strategy counts its committed writes:
`strategies.admissionregistration.WebhookConfigurationGeneration`); after a configuration
write, one key-range lookup per kind and a (name, resourceVersion) comparison decide whether
to recompile. Parsed selectors and TLS contexts are built once per compiled webhook.

Data flow: generation moved? -> store.list(<prefix>) -> fingerprint -> cached `Webhook` list,
in upstream's order (configurations by name, webhooks in their order).
"""

from __future__ import annotations

import base64
import binascii
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from apiserver.storage.interface import Store
from minik3s.api.selectors import LabelSelector, label_selector_from_dict
from minik3s.api.types import JsonDict

MUTATING_PREFIX = "admissionregistration.k8s.io/mutatingwebhookconfigurations/"
VALIDATING_PREFIX = "admissionregistration.k8s.io/validatingwebhookconfigurations/"


class CABundleError(Exception):
    """clientConfig.caBundle holds no usable PEM certificate."""


def parse_selector(d: Any) -> LabelSelector:
    if not isinstance(d, dict):
        return LabelSelector.everything()
    try:
        return label_selector_from_dict(d)
    except ValueError:
        # validation refused such a selector on write; a stored one that no longer parses
        # matches nothing rather than everything
        return LabelSelector.nothing()


@dataclass(slots=True, eq=False)
class Webhook:
    """One compiled webhook of a configuration."""

    name: str
    configuration: str
    mutating: bool
    spec: JsonDict
    rules: list[JsonDict]
    namespace_selector: LabelSelector
    object_selector: LabelSelector
    failure_policy: str
    match_policy: str
    side_effects: str
    timeout_seconds: int
    review_versions: list[str]
    reinvocation_policy: str
    client_config: JsonDict
    _ssl: ssl.SSLContext | CABundleError | None = field(default=None, repr=False)

    @classmethod
    def compile(cls, configuration: str, w: JsonDict, *, mutating: bool) -> Webhook:
        return cls(
            name=str(w.get("name") or ""),
            configuration=configuration,
            mutating=mutating,
            spec=w,
            rules=[r for r in w.get("rules") or () if isinstance(r, dict)],
            namespace_selector=parse_selector(w.get("namespaceSelector")),
            object_selector=parse_selector(w.get("objectSelector")),
            failure_policy=str(w.get("failurePolicy") or "Fail"),
            match_policy=str(w.get("matchPolicy") or "Equivalent"),
            side_effects=str(w.get("sideEffects") or "Unknown"),
            timeout_seconds=int(w.get("timeoutSeconds") or 10),
            review_versions=[str(v) for v in w.get("admissionReviewVersions") or ()],
            reinvocation_policy=str(w.get("reinvocationPolicy") or "Never"),
            client_config=dict(w.get("clientConfig") or {}),
        )

    @property
    def has_match_conditions(self) -> bool:
        return bool(self.spec.get("matchConditions"))

    @property
    def match_conditions(self) -> list[tuple[str, str]]:
        """(name, CEL expression) of each matchCondition, in order."""
        return [(str(mc.get("name") or ""), str(mc.get("expression") or ""))
                for mc in self.spec.get("matchConditions") or () if isinstance(mc, dict)]

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS client context trusting `caBundle` (PEM, base64 on the wire), or the system
        roots when it is empty. Raises CABundleError for a bundle without a certificate."""
        if self._ssl is None:
            self._ssl = _build_ssl(self.client_config.get("caBundle"))
        if isinstance(self._ssl, CABundleError):
            raise self._ssl
        return self._ssl


def _build_ssl(bundle: Any) -> ssl.SSLContext | CABundleError:
    if not bundle:
        return ssl.create_default_context()
    try:
        pem = base64.b64decode(str(bundle), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return CABundleError("unable to load root certificates: unable to parse bytes as PEM block")
    if "-----BEGIN CERTIFICATE-----" not in pem:
        return CABundleError("unable to load root certificates: unable to parse bytes as PEM block")
    try:
        return ssl.create_default_context(cadata=pem)
    except (ssl.SSLError, ValueError) as e:
        return CABundleError(f"unable to load root certificates: {e}")


@dataclass(slots=True)
class _Cached:
    fingerprint: tuple[tuple[str, str], ...] = ()
    hooks: list[Webhook] = field(default_factory=list)


class WebhookSource:
    """The current mutating and validating webhooks, recompiled only when a configuration's
    resourceVersion changes. `generation()` (the count of committed configuration writes) lets
    a request skip even that check while nothing was written: the per-write cost with no
    configuration is one integer comparison."""

    __slots__ = ("_any", "_cache", "_generation", "_seen", "_store")

    def __init__(self, store: Store, generation: Callable[[], int] | None = None) -> None:
        self._store = store
        self._generation = generation
        self._seen = -1
        self._any = False
        self._cache: dict[str, _Cached] = {MUTATING_PREFIX: _Cached(), VALIDATING_PREFIX: _Cached()}

    def _fresh(self) -> bool:
        """True when no configuration was written since the last look."""
        if self._generation is None:
            return False
        gen = self._generation()
        if gen == self._seen:
            return True
        self._seen = gen
        return False

    def any(self) -> bool:
        if self._fresh():
            return self._any
        count = self._store.count_after
        self._any = bool(count(MUTATING_PREFIX) or count(VALIDATING_PREFIX))
        self._refresh(MUTATING_PREFIX, mutating=True)
        self._refresh(VALIDATING_PREFIX, mutating=False)
        return self._any

    def mutating(self) -> list[Webhook]:
        if not self.any():
            return []
        return self._cache[MUTATING_PREFIX].hooks

    def validating(self) -> list[Webhook]:
        if not self.any():
            return []
        return self._cache[VALIDATING_PREFIX].hooks

    def _refresh(self, prefix: str, *, mutating: bool) -> None:
        cached = self._cache[prefix]
        if not cached.fingerprint and self._store.count_after(prefix) == 0:
            return
        items, _ = self._store.list(prefix)
        fp = tuple(((o.get("metadata") or {}).get("name", ""), (o.get("metadata") or {}).get("resourceVersion", ""))
                   for o in items)
        if fp != cached.fingerprint:
            hooks: list[Webhook] = []
            for cfg in items:
                cname = str((cfg.get("metadata") or {}).get("name") or "")
                hooks.extend(Webhook.compile(cname, w, mutating=mutating)
                             for w in cfg.get("webhooks") or () if isinstance(w, dict))
            self._cache[prefix] = _Cached(fp, hooks)
