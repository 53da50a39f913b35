"""flowcontrol.apiserver.k8s.io/v1 wire types (layer L2, upstream k8s.io/api/flowcontrol/v1); the
bootstrap configuration is `minik3s.api.apf_bootstrap`.

Every request the API server serves is classified by the FlowSchemas (lowest matchingPrecedence
first, then name; `catch-all` when none matches), and the response names the FlowSchema and its
PriorityLevelConfiguration by UID (`X-Kubernetes-PF-FlowSchema-UID`,
`X-Kubernetes-PF-PriorityLevel-UID`). The server keeps the bootstrap objects (`apf_bootstrap`): the mandatory
ones (`exempt` and `catch-all` of each kind) always as written here, the suggested ones re-created
when deleted and rewritten while their `apf.kubernetes.io/autoupdate-spec` annotation says "true".
"""

from __future__ import annotations

from minik3s.api.meta import Condition, K8sModel, TypedObject

# ---- wire types -------------------------------------------------------------------------------------

class UserSubject(K8sModel):
    name: str = ""


class GroupSubject(K8sModel):
    name: str = ""


class ServiceAccountSubject(K8sModel):
    namespace: str = ""
    name: str = ""


class Subject(K8sModel):
    kind: str = ""
    user: UserSubject | None = None
    group: GroupSubject | None = None
    serviceAccount: ServiceAccountSubject | None = None


class ResourcePolicyRule(K8sModel):
    verbs: list[str] | None = None
    apiGroups: list[str] | None = None
    resources: list[str] | None = None
    clusterScope: bool | None = None
    namespaces: list[str] | None = None


class NonResourcePolicyRule(K8sModel):
    verbs: list[str] | None = None
    nonResourceURLs: list[str] | None = None


class PolicyRulesWithSubjects(K8sModel):
    subjects: list[Subject] | None = None
    resourceRules: list[ResourcePolicyRule] | None = None
    nonResourceRules: list[NonResourcePolicyRule] | None = None


class PriorityLevelConfigurationReference(K8sModel):
    name: str = ""


class FlowDistinguisherMethod(K8sModel):
    type: str = ""


class FlowSchemaSpec(K8sModel):
    priorityLevelConfiguration: PriorityLevelConfigurationReference | None = None
    matchingPrecedence: int | None = None
    distinguisherMethod: FlowDistinguisherMethod | None = None
    rules: list[PolicyRulesWithSubjects] | None = None


class FlowSchemaStatus(K8sModel):
    conditions: list[Condition] | None = None


class FlowSchema(TypedObject):
    spec: FlowSchemaSpec | None = None
    status: FlowSchemaStatus | None = None


class QueuingConfiguration(K8sModel):
    queues: int | None = None
    handSize: int | None = None
    queueLengthLimit: int | None = None


class LimitResponse(K8sModel):
    type: str = ""
    queuing: QueuingConfiguration | None = None


class LimitedPriorityLevelConfiguration(K8sModel):
    nominalConcurrencyShares: int | None = None
    limitResponse: LimitResponse | None = None
    lendablePercent: int | None = None
    borrowingLimitPercent: int | None = None


class ExemptPriorityLevelConfiguration(K8sModel):
    nominalConcurrencyShares: int | None = None
    lendablePercent: int | None = None


class PriorityLevelConfigurationSpec(K8sModel):
    type: str = ""
    limited: LimitedPriorityLevelConfiguration | None = None
    exempt: ExemptPriorityLevelConfiguration | None = None


class PriorityLevelConfigurationStatus(K8sModel):
    conditions: list[Condition] | None = None


class PriorityLevelConfiguration(TypedObject):
    spec: PriorityLevelConfigurationSpec | None = None
    status: PriorityLevelConfigurationStatus | None = None
