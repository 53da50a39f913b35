"""admissionregistration.k8s.io/v1 wire types: Validating/MutatingWebhookConfiguration,
ValidatingAdmissionPolicy and its Binding (layer L2, upstream k8s.io/api/admissionregistration/v1).

The webhooks are called by `apiserver.webhooks` (docs/security.md "Admission webhooks");
ValidatingAdmissionPolicies are stored and validated only (no CEL is evaluated).
"""

from __future__ import annotations

from minik3s.api.meta import K8sModel, LabelSelector, TypedObject


class ServiceReference(K8sModel):
    namespace: str = ""
    name: str = ""
    path: str | None = None
    port: int | None = None


class WebhookClientConfig(K8sModel):
    url: str | None = None
    service: ServiceReference | None = None
    caBundle: str | None = None


class RuleWithOperations(K8sModel):
    operations: list[str] | None = None
    apiGroups: list[str] | None = None
    apiVersions: list[str] | None = None
    resources: list[str] | None = None
    scope: str | None = None


class MatchCondition(K8sModel):
    name: str = ""
    expression: str = ""


class ValidatingWebhook(K8sModel):
    name: str = ""
    clientConfig: WebhookClientConfig | None = None
    rules: list[RuleWithOperations] | None = None
    failurePolicy: str | None = None
    matchPolicy: str | None = None
    namespaceSelector: LabelSelector | None = None
    objectSelector: LabelSelector | None = None
    sideEffects: str | None = None
    timeoutSeconds: int | None = None
    admissionReviewVersions: list[str] | None = None
    matchConditions: list[MatchCondition] | None = None


class MutatingWebhook(ValidatingWebhook):
    reinvocationPolicy: str | None = None


class ValidatingWebhookConfiguration(TypedObject):
    webhooks: list[ValidatingWebhook] | None = None


class MutatingWebhookConfiguration(TypedObject):
    webhooks: list[MutatingWebhook] | None = None


class ParamKind(K8sModel):
    apiVersion: str | None = None
    kind: str | None = None


class NamedRuleWithOperations(RuleWithOperations):
    resourceNames: list[str] | None = None


class MatchResources(K8sModel):
    namespaceSelector: LabelSelector | None = None
    objectSelector: LabelSelector | None = None
    resourceRules: list[NamedRuleWithOperations] | None = None
    excludeResourceRules: list[NamedRuleWithOperations] | None = None
    matchPolicy: str | None = None


class Validation(K8sModel):
    expression: str = ""
    message: str | None = None
    reason: str | None = None
    messageExpression: str | None = None


class AuditAnnotation(K8sModel):
    key: str = ""
    valueExpression: str = ""


class Variable(K8sModel):
    name: str = ""
    expression: str = ""


class ValidatingAdmissionPolicySpec(K8sModel):
    paramKind: ParamKind | None = None
    matchConstraints: MatchResources | None = None
    validations: list[Validation] | None = None
    failurePolicy: str | None = None
    auditAnnotations: list[AuditAnnotation] | None = None
    matchConditions: list[MatchCondition] | None = None
    variables: list[Variable] | None = None


class ValidatingAdmissionPolicyStatus(K8sModel):
    observedGeneration: int | None = None
    typeChecking: dict[str, object] | None = None
    conditions: list[dict[str, object]] | None = None


class ValidatingAdmissionPolicy(TypedObject):
    spec: ValidatingAdmissionPolicySpec | None = None
    status: ValidatingAdmissionPolicyStatus | None = None


class ParamRef(K8sModel):
    name: str | None = None
    namespace: str | None = None
    selector: LabelSelector | None = None
    parameterNotFoundAction: str | None = None


class ValidatingAdmissionPolicyBindingSpec(K8sModel):
    policyName: str = ""
    paramRef: ParamRef | None = None
    matchResources: MatchResources | None = None
    validationActions: list[str] | None = None


class ValidatingAdmissionPolicyBinding(TypedObject):
    spec: ValidatingAdmissionPolicyBindingSpec | None = None
