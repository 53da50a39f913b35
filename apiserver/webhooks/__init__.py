"""Dynamic admission: MutatingWebhookConfiguration / ValidatingWebhookConfiguration webhooks
called as kube-apiserver v1.33 calls them (layer L4, apiserver; between `core` and `strategies`).

Why: operator authors test their admission webhooks against an API server (envtest); minik3s
serves the configurations and now calls them, with upstream's matching, AdmissionReview v1,
failure policies and error texts (staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook).

Data flow: `core` (create / update / patch / delete / status) builds an `Attributes` ->
`WebhookAdmission.mutate` (matching mutating webhooks, serially, JSON patches applied in
order, IfNeeded reinvocation) -> the kind's validation -> `WebhookAdmission.validate`
(matching validating webhooks, in parallel) -> storage. The configurations are read from the
store per request and compiled once per resourceVersion (`source`); `rules` decides which
webhook a request reaches; `call` speaks HTTPS (aiohttp's client, the one place the API server
is an HTTP client) and verifies the response.
"""

from apiserver.webhooks.dispatch import Attributes, WebhookAdmission

__all__ = ["Attributes", "WebhookAdmission"]
