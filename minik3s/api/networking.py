"""networking.k8s.io/v1 wire types: Ingress, IngressClass, NetworkPolicy, ServiceCIDR, IPAddress
(layer L2, upstream k8s.io/api/networking/v1).

Stored and validated only: minik3s runs no ingress controller and no network plugin, so
Ingress status is whatever a client writes and NetworkPolicies do not filter traffic.
"""

from __future__ import annotations

from pydantic import Field

from minik3s.api.meta import Condition, IntOrString, K8sModel, LabelSelector, TypedObject


class ServiceBackendPort(K8sModel):
    name: str | None = None
    number: int | None = None


class IngressServiceBackend(K8sModel):
    name: str = ""
    port: ServiceBackendPort | None = None


class IngressTypedLocalObjectReference(K8sModel):
    apiGroup: str | None = None
    kind: str = ""
    name: str = ""


class IngressBackend(K8sModel):
    service: IngressServiceBackend | None = None
    resource: IngressTypedLocalObjectReference | None = None


class HTTPIngressPath(K8sModel):
    path: str | None = None
    pathType: str | None = None
    backend: IngressBackend | None = None


class HTTPIngressRuleValue(K8sModel):
    paths: list[HTTPIngressPath] | None = None


class IngressRule(K8sModel):
    host: str | None = None
    http: HTTPIngressRuleValue | None = None


class IngressTLS(K8sModel):
    hosts: list[str] | None = None
    secretName: str | None = None


class IngressSpec(K8sModel):
    ingressClassName: str | None = None
    defaultBackend: IngressBackend | None = None
    tls: list[IngressTLS] | None = None
    rules: list[IngressRule] | None = None


class IngressPortStatus(K8sModel):
    port: int = 0
    protocol: str = ""
    error: str | None = None


class IngressLoadBalancerIngress(K8sModel):
    ip: str | None = None
    hostname: str | None = None
    ports: list[IngressPortStatus] | None = None


class IngressLoadBalancerStatus(K8sModel):
    ingress: list[IngressLoadBalancerIngress] | None = None


class IngressStatus(K8sModel):
    loadBalancer: IngressLoadBalancerStatus | None = None


class Ingress(TypedObject):
    spec: IngressSpec | None = None
    status: IngressStatus | None = None


class IngressClassParametersReference(K8sModel):
    apiGroup: str | None = None
    kind: str = ""
    name: str = ""
    scope: str | None = None
    namespace: str | None = None


class IngressClassSpec(K8sModel):
    controller: str | None = None
    parameters: IngressClassParametersReference | None = None


class IngressClass(TypedObject):
    spec: IngressClassSpec | None = None


class IPBlock(K8sModel):
    cidr: str = ""
    # "except" and "from" are Python keywords: the wire names are the aliases
    except_: list[str] | None = Field(default=None, alias="except")


class NetworkPolicyPort(K8sModel):
    protocol: str | None = None
    port: IntOrString | None = None
    endPort: int | None = None


class NetworkPolicyPeer(K8sModel):
    podSelector: LabelSelector | None = None
    namespaceSelector: LabelSelector | None = None
    ipBlock: IPBlock | None = None


class NetworkPolicyIngressRule(K8sModel):
    ports: list[NetworkPolicyPort] | None = None
    from_: list[NetworkPolicyPeer] | None = Field(default=None, alias="from")


class NetworkPolicyEgressRule(K8sModel):
    ports: list[NetworkPolicyPort] | None = None
    to: list[NetworkPolicyPeer] | None = None


class NetworkPolicySpec(K8sModel):
    podSelector: LabelSelector | None = None
    ingress: list[NetworkPolicyIngressRule] | None = None
    egress: list[NetworkPolicyEgressRule] | None = None
    policyTypes: list[str] | None = None


class NetworkPolicy(TypedObject):
    spec: NetworkPolicySpec | None = None


class ServiceCIDRSpec(K8sModel):
    cidrs: list[str] | None = None


class ServiceCIDRStatus(K8sModel):
    conditions: list[Condition] | None = None


class ServiceCIDR(TypedObject):
    """A range Service cluster IPs are allocated from (KEP-1880, GA in 1.33); the apiserver keeps
    the default one, `kubernetes`, from its service CIDR."""

    spec: ServiceCIDRSpec | None = None
    status: ServiceCIDRStatus | None = None


class ParentReference(K8sModel):
    group: str | None = None
    resource: str | None = None
    namespace: str | None = None
    name: str | None = None


class IPAddressSpec(K8sModel):
    parentRef: ParentReference | None = None


class IPAddress(TypedObject):
    """One allocated cluster IP (named after it) and the Service holding it."""

    spec: IPAddressSpec | None = None

