"""core/v1 wire types: Pod, Node, Namespace, Service, ConfigMap, Secret, Event, Binding (layer L2).

Why: the schema of the served core kinds, for the unknown-field walk (fieldValidation), OpenAPI
generation and typed access in tests. Enumerated strings are `Literal`s so the generated schema
lists them; the request path validates dicts by hand (apiserver/strategies) with upstream's
messages, so these models are not constructed per request.

Volume sources and a few rarely used nested structs are typed `dict[str, Any]`: accepted as-is,
never reported as unknown.
"""

from __future__ import annotations

from typing import Any, Literal

from minik3s.api.meta import (
    IntOrString,
    K8sModel,
    LabelSelector,
    ObjectMeta,
    Quantity,
    TypedObject,
)

ResourceList = dict[str, Quantity]

RestartPolicy = Literal["Always", "OnFailure", "Never"]
DNSPolicy = Literal["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
PullPolicy = Literal["Always", "Never", "IfNotPresent"]
Protocol = Literal["TCP", "UDP", "SCTP"]
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
TolerationOperator = Literal["Exists", "Equal"]
PreemptionPolicy = Literal["PreemptLowerPriority", "Never"]


class ObjectReference(K8sModel):
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    apiVersion: str | None = None
    resourceVersion: str | None = None
    fieldPath: str | None = None


class LocalObjectReference(K8sModel):
    name: str | None = None


# --- containers -------------------------------------------------------------------------------


class ContainerPort(K8sModel):
    name: str | None = None
    hostPort: int | None = None
    containerPort: int
    protocol: Protocol | None = None
    hostIP: str | None = None


class KeySelector(K8sModel):
    key: str
    name: str | None = None
    optional: bool | None = None


class ObjectFieldSelector(K8sModel):
    apiVersion: str | None = None
    fieldPath: str


class ResourceFieldSelector(K8sModel):
    containerName: str | None = None
    resource: str
    divisor: Quantity | None = None


class EnvVarSource(K8sModel):
    fieldRef: ObjectFieldSelector | None = None
    resourceFieldRef: ResourceFieldSelector | None = None
    configMapKeyRef: KeySelector | None = None
    secretKeyRef: KeySelector | None = None


class EnvVar(K8sModel):
    name: str
    value: str | None = None
    valueFrom: EnvVarSource | None = None


class EnvFromSource(K8sModel):
    prefix: str | None = None
    configMapRef: dict[str, Any] | None = None
    secretRef: dict[str, Any] | None = None


class ResourceClaim(K8sModel):
    name: str
    request: str | None = None


class ResourceRequirements(K8sModel):
    limits: ResourceList | None = None
    requests: ResourceList | None = None
    claims: list[ResourceClaim] | None = None


class ContainerResizePolicy(K8sModel):
    resourceName: str
    restartPolicy: Literal["NotRequired", "RestartContainer"]


class VolumeMount(K8sModel):
    name: str
    readOnly: bool | None = None
    recursiveReadOnly: str | None = None
    mountPath: str
    subPath: str | None = None
    mountPropagation: str | None = None
    subPathExpr: str | None = None


class VolumeDevice(K8sModel):
    name: str
    devicePath: str


class ExecAction(K8sModel):
    command: list[str] | None = None


class HTTPHeader(K8sModel):
    name: str
    value: str


class HTTPGetAction(K8sModel):
    path: str | None = None
    port: IntOrString
    host: str | None = None
    scheme: Literal["HTTP", "HTTPS"] | None = None
    httpHeaders: list[HTTPHeader] | None = None


class TCPSocketAction(K8sModel):
    port: IntOrString
    host: str | None = None


class GRPCAction(K8sModel):
    port: int
    service: str | None = None


class Probe(K8sModel):
    exec: ExecAction | None = None
    httpGet: HTTPGetAction | None = None
    tcpSocket: TCPSocketAction | None = None
    grpc: GRPCAction | None = None
    initialDelaySeconds: int | None = None
    timeoutSeconds: int | None = None
    periodSeconds: int | None = None
    successThreshold: int | None = None
    failureThreshold: int | None = None
    terminationGracePeriodSeconds: int | None = None


class LifecycleHandler(K8sModel):
    exec: ExecAction | None = None
    httpGet: HTTPGetAction | None = None
    tcpSocket: TCPSocketAction | None = None
    sleep: dict[str, Any] | None = None


class Lifecycle(K8sModel):
    postStart: LifecycleHandler | None = None
    preStop: LifecycleHandler | None = None
    stopSignal: str | None = None


class SecurityContext(K8sModel):
    capabilities: dict[str, Any] | None = None
    privileged: bool | None = None
    seLinuxOptions: dict[str, Any] | None = None
    windowsOptions: dict[str, Any] | None = None
    runAsUser: int | None = None
    runAsGroup: int | None = None
    runAsNonRoot: bool | None = None
    readOnlyRootFilesystem: bool | None = None
    allowPrivilegeEscalation: bool | None = None
    procMount: str | None = None
    seccompProfile: dict[str, Any] | None = None
    appArmorProfile: dict[str, Any] | None = None


class Container(K8sModel):
    name: str
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    workingDir: str | None = None
    ports: list[ContainerPort] | None = None
    envFrom: list[EnvFromSource] | None = None
    env: list[EnvVar] | None = None
    resources: ResourceRequirements | None = None
    resizePolicy: list[ContainerResizePolicy] | None = None
    restartPolicy: Literal["Always"] | None = None
    volumeMounts: list[VolumeMount] | None = None
    volumeDevices: list[VolumeDevice] | None = None
    livenessProbe: Probe | None = None
    readinessProbe: Probe | None = None
    startupProbe: Probe | None = None
    lifecycle: Lifecycle | None = None
    terminationMessagePath: str | None = None
    terminationMessagePolicy: Literal["File", "FallbackToLogsOnError"] | None = None
    imagePullPolicy: PullPolicy | None = None
    securityContext: SecurityContext | None = None
    stdin: bool | None = None
    stdinOnce: bool | None = None
    tty: bool | None = None


class EphemeralContainer(Container):
    targetContainerName: str | None = None


# --- scheduling constraints ---------------------------------------------------------------------


class NodeSelectorRequirement(K8sModel):
    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: list[str] | None = None


class NodeSelectorTerm(K8sModel):
    matchExpressions: list[NodeSelectorRequirement] | None = None
    matchFields: list[NodeSelectorRequirement] | None = None


class NodeSelector(K8sModel):
    nodeSelectorTerms: list[NodeSelectorTerm]


class PreferredSchedulingTerm(K8sModel):
    weight: int
    preference: NodeSelectorTerm


class NodeAffinity(K8sModel):
    requiredDuringSchedulingIgnoredDuringExecution: NodeSelector | None = None
    preferredDuringSchedulingIgnoredDuringExecution: list[PreferredSchedulingTerm] | None = None


class PodAffinityTerm(K8sModel):
    labelSelector: LabelSelector | None = None
    namespaces: list[str] | None = None
    topologyKey: str
    namespaceSelector: LabelSelector | None = None
    matchLabelKeys: list[str] | None = None
    mismatchLabelKeys: list[str] | None = None


class WeightedPodAffinityTerm(K8sModel):
    weight: int
    podAffinityTerm: PodAffinityTerm


class PodAffinity(K8sModel):
    requiredDuringSchedulingIgnoredDuringExecution: list[PodAffinityTerm] | None = None
    preferredDuringSchedulingIgnoredDuringExecution: list[WeightedPodAffinityTerm] | None = None


class Affinity(K8sModel):
    nodeAffinity: NodeAffinity | None = None
    podAffinity: PodAffinity | None = None
    podAntiAffinity: PodAffinity | None = None


class Toleration(K8sModel):
    key: str | None = None
    operator: TolerationOperator | None = None
    value: str | None = None
    effect: TaintEffect | None = None
    tolerationSeconds: int | None = None


class TopologySpreadConstraint(K8sModel):
    maxSkew: int
    topologyKey: str
    whenUnsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    labelSelector: LabelSelector | None = None
    minDomains: int | None = None
    nodeAffinityPolicy: Literal["Honor", "Ignore"] | None = None
    nodeTaintsPolicy: Literal["Honor", "Ignore"] | None = None
    matchLabelKeys: list[str] | None = None


class PodSchedulingGate(K8sModel):
    name: str


class PodReadinessGate(K8sModel):
    conditionType: str


class PodSecurityContext(K8sModel):
    seLinuxOptions: dict[str, Any] | None = None
    windowsOptions: dict[str, Any] | None = None
    runAsUser: int | None = None
    runAsGroup: int | None = None
    runAsNonRoot: bool | None = None
    supplementalGroups: list[int] | None = None
    supplementalGroupsPolicy: str | None = None
    fsGroup: int | None = None
    fsGroupChangePolicy: str | None = None
    sysctls: list[dict[str, Any]] | None = None
    seccompProfile: dict[str, Any] | None = None
    appArmorProfile: dict[str, Any] | None = None
    seLinuxChangePolicy: str | None = None


class PodDNSConfig(K8sModel):
    nameservers: list[str] | None = None
    searches: list[str] | None = None
    options: list[dict[str, Any]] | None = None


class HostAlias(K8sModel):
    ip: str
    hostnames: list[str] | None = None


class Volume(K8sModel):
    """A named volume; the source (emptyDir, configMap, secret, hostPath, persistentVolumeClaim,
    projected, downwardAPI, csi, ephemeral, ...) is kept as given."""

    name: str
    emptyDir: dict[str, Any] | None = None
    hostPath: dict[str, Any] | None = None
    configMap: dict[str, Any] | None = None
    secret: dict[str, Any] | None = None
    persistentVolumeClaim: dict[str, Any] | None = None
    projected: dict[str, Any] | None = None
    downwardAPI: dict[str, Any] | None = None
    csi: dict[str, Any] | None = None
    ephemeral: dict[str, Any] | None = None
    nfs: dict[str, Any] | None = None
    image: dict[str, Any] | None = None
    # the in-tree sources v1.33 still serves (most deprecated, some non-functional): kept so a
    # manifest that names one is stored as written, not refused by strict decoding or pruned
    gitRepo: dict[str, Any] | None = None
    gcePersistentDisk: dict[str, Any] | None = None
    awsElasticBlockStore: dict[str, Any] | None = None
    iscsi: dict[str, Any] | None = None
    glusterfs: dict[str, Any] | None = None
    rbd: dict[str, Any] | None = None
    flexVolume: dict[str, Any] | None = None
    cinder: dict[str, Any] | None = None
    cephfs: dict[str, Any] | None = None
    flocker: dict[str, Any] | None = None
    fc: dict[str, Any] | None = None
    azureFile: dict[str, Any] | None = None
    vsphereVolume: dict[str, Any] | None = None
    quobyte: dict[str, Any] | None = None
    azureDisk: dict[str, Any] | None = None
    photonPersistentDisk: dict[str, Any] | None = None
    portworxVolume: dict[str, Any] | None = None
    scaleIO: dict[str, Any] | None = None
    storageos: dict[str, Any] | None = None


class PodResourceClaim(K8sModel):
    name: str
    resourceClaimName: str | None = None
    resourceClaimTemplateName: str | None = None


class PodOS(K8sModel):
    name: Literal["linux", "windows"]


class WorkloadReference(K8sModel):
    """pod.spec.workloadRef (v1.35 alpha, KEP-4671): the Workload and its podGroup the pod
    belongs to; immutable once set."""

    name: str
    podGroup: str
    podGroupReplicaKey: str | None = None


class PodSpec(K8sModel):
    volumes: list[Volume] | None = None
    initContainers: list[Container] | None = None
    containers: list[Container]
    ephemeralContainers: list[EphemeralContainer] | None = None
    restartPolicy: RestartPolicy | None = None
    terminationGracePeriodSeconds: int | None = None
    activeDeadlineSeconds: int | None = None
    dnsPolicy: DNSPolicy | None = None
    nodeSelector: dict[str, str] | None = None
    serviceAccountName: str | None = None
    serviceAccount: str | None = None
    automountServiceAccountToken: bool | None = None
    nodeName: str | None = None
    hostNetwork: bool | None = None
    hostPID: bool | None = None
    hostIPC: bool | None = None
    shareProcessNamespace: bool | None = None
    securityContext: PodSecurityContext | None = None
    imagePullSecrets: list[LocalObjectReference] | None = None
    hostname: str | None = None
    subdomain: str | None = None
    affinity: Affinity | None = None
    schedulerName: str | None = None
    tolerations: list[Toleration] | None = None
    hostAliases: list[HostAlias] | None = None
    priorityClassName: str | None = None
    priority: int | None = None
    dnsConfig: PodDNSConfig | None = None
    readinessGates: list[PodReadinessGate] | None = None
    runtimeClassName: str | None = None
    enableServiceLinks: bool | None = None
    preemptionPolicy: PreemptionPolicy | None = None
    overhead: ResourceList | None = None
    topologySpreadConstraints: list[TopologySpreadConstraint] | None = None
    setHostnameAsFQDN: bool | None = None
    os: PodOS | None = None
    hostUsers: bool | None = None
    schedulingGates: list[PodSchedulingGate] | None = None
    workloadRef: WorkloadReference | None = None
    resourceClaims: list[PodResourceClaim] | None = None
    resources: ResourceRequirements | None = None


class PodCondition(K8sModel):
    type: str
    observedGeneration: int | None = None
    status: Literal["True", "False", "Unknown"]
    lastProbeTime: str | None = None
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class ContainerState(K8sModel):
    waiting: dict[str, Any] | None = None
    running: dict[str, Any] | None = None
    terminated: dict[str, Any] | None = None


class ContainerStatus(K8sModel):
    name: str
    state: ContainerState | None = None
    lastState: ContainerState | None = None
    ready: bool
    restartCount: int
    image: str
    imageID: str
    containerID: str | None = None
    started: bool | None = None
    allocatedResources: ResourceList | None = None
    resources: ResourceRequirements | None = None
    volumeMounts: list[dict[str, Any]] | None = None
    user: dict[str, Any] | None = None
    allocatedResourcesStatus: list[dict[str, Any]] | None = None
    stopSignal: str | None = None


class HostIP(K8sModel):
    ip: str


class PodStatus(K8sModel):
    observedGeneration: int | None = None
    phase: Literal["Pending", "Running", "Succeeded", "Failed", "Unknown"] | None = None
    conditions: list[PodCondition] | None = None
    message: str | None = None
    reason: str | None = None
    nominatedNodeName: str | None = None
    hostIP: str | None = None
    hostIPs: list[HostIP] | None = None
    podIP: str | None = None
    podIPs: list[HostIP] | None = None
    startTime: str | None = None
    initContainerStatuses: list[ContainerStatus] | None = None
    containerStatuses: list[ContainerStatus] | None = None
    qosClass: Literal["Guaranteed", "Burstable", "BestEffort"] | None = None
    ephemeralContainerStatuses: list[ContainerStatus] | None = None
    resize: str | None = None
    resourceClaimStatuses: list[dict[str, Any]] | None = None


class Pod(TypedObject):
    spec: PodSpec | None = None
    status: PodStatus | None = None


class PodTemplateSpec(K8sModel):
    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None


class PodTemplate(TypedObject):
    """core/v1 PodTemplate: a stored pod template (`kubectl get podtemplates`)."""

    template: PodTemplateSpec | None = None


class ComponentCondition(K8sModel):
    type: str
    status: str
    message: str | None = None
    error: str | None = None


class ComponentStatus(TypedObject):
    """core/v1 ComponentStatus (deprecated in v1.19+; probed on each read)."""

    conditions: list[ComponentCondition] | None = None


class Binding(TypedObject):
    target: ObjectReference


# --- nodes ----------------------------------------------------------------------------------------


class Taint(K8sModel):
    key: str
    value: str | None = None
    effect: TaintEffect
    timeAdded: str | None = None


class NodeSpec(K8sModel):
    podCIDR: str | None = None
    podCIDRs: list[str] | None = None
    providerID: str | None = None
    unschedulable: bool | None = None
    taints: list[Taint] | None = None
    configSource: dict[str, Any] | None = None
    externalID: str | None = None


class NodeCondition(K8sModel):
    type: str
    status: Literal["True", "False", "Unknown"]
    lastHeartbeatTime: str | None = None
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class NodeAddress(K8sModel):
    type: str
    address: str


class NodeSystemInfo(K8sModel):
    machineID: str = ""
    systemUUID: str = ""
    bootID: str = ""
    kernelVersion: str = ""
    osImage: str = ""
    containerRuntimeVersion: str = ""
    kubeletVersion: str = ""
    kubeProxyVersion: str = ""
    operatingSystem: str = ""
    architecture: str = ""
    swap: dict[str, Any] | None = None


class ContainerImage(K8sModel):
    names: list[str] | None = None
    sizeBytes: int | None = None


class NodeStatus(K8sModel):
    capacity: ResourceList | None = None
    allocatable: ResourceList | None = None
    phase: str | None = None
    conditions: list[NodeCondition] | None = None
    addresses: list[NodeAddress] | None = None
    daemonEndpoints: dict[str, Any] | None = None
    nodeInfo: NodeSystemInfo | None = None
    images: list[ContainerImage] | None = None
    volumesInUse: list[str] | None = None
    volumesAttached: list[dict[str, Any]] | None = None
    config: dict[str, Any] | None = None
    runtimeHandlers: list[dict[str, Any]] | None = None
    features: dict[str, Any] | None = None


class Node(TypedObject):
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


# --- namespaces, config, services, events ------------------------------------------------------


class NamespaceSpec(K8sModel):
    finalizers: list[str] | None = None


class NamespaceStatus(K8sModel):
    phase: Literal["Active", "Terminating"] | None = None
    conditions: list[dict[str, Any]] | None = None


class Namespace(TypedObject):
    spec: NamespaceSpec | None = None
    status: NamespaceStatus | None = None


class ConfigMap(TypedObject):
    immutable: bool | None = None
    data: dict[str, str] | None = None
    binaryData: dict[str, str] | None = None


class Secret(TypedObject):
    immutable: bool | None = None
    data: dict[str, str] | None = None
    stringData: dict[str, str] | None = None
    type: str | None = None


class ServicePort(K8sModel):
    name: str | None = None
    protocol: Protocol | None = None
    appProtocol: str | None = None
    port: int
    targetPort: IntOrString | None = None
    nodePort: int | None = None


class ServiceSpec(K8sModel):
    ports: list[ServicePort] | None = None
    selector: dict[str, str] | None = None
    clusterIP: str | None = None
    clusterIPs: list[str] | None = None
    type: Literal["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"] | None = None
    externalIPs: list[str] | None = None
    sessionAffinity: Literal["ClientIP", "None"] | None = None
    loadBalancerIP: str | None = None
    loadBalancerSourceRanges: list[str] | None = None
    externalName: str | None = None
    externalTrafficPolicy: Literal["Cluster", "Local"] | None = None
    healthCheckNodePort: int | None = None
    publishNotReadyAddresses: bool | None = None
    sessionAffinityConfig: dict[str, Any] | None = None
    ipFamilies: list[str] | None = None
    ipFamilyPolicy: str | None = None
    allocateLoadBalancerNodePorts: bool | None = None
    loadBalancerClass: str | None = None
    internalTrafficPolicy: Literal["Cluster", "Local"] | None = None
    trafficDistribution: str | None = None


class ServiceStatus(K8sModel):
    loadBalancer: dict[str, Any] | None = None
    conditions: list[dict[str, Any]] | None = None


class Service(TypedObject):
    spec: ServiceSpec | None = None
    status: ServiceStatus | None = None


class EventSource(K8sModel):
    component: str | None = None
    host: str | None = None


class EventSeries(K8sModel):
    count: int | None = None
    lastObservedTime: str | None = None


class Event(TypedObject):
    """core/v1 Event."""

    involvedObject: ObjectReference
    reason: str | None = None
    message: str | None = None
    source: EventSource | None = None
    firstTimestamp: str | None = None
    lastTimestamp: str | None = None
    count: int | None = None
    type: str | None = None
    eventTime: str | None = None
    series: EventSeries | None = None
    action: str | None = None
    related: ObjectReference | None = None
    reportingComponent: str | None = None
    reportingInstance: str | None = None


class EventsV1Event(TypedObject):
    """events.k8s.io/v1 Event."""

    eventTime: str
    series: EventSeries | None = None
    reportingController: str | None = None
    reportingInstance: str | None = None
    action: str | None = None
    reason: str | None = None
    regarding: ObjectReference | None = None
    related: ObjectReference | None = None
    note: str | None = None
    type: str | None = None
    deprecatedSource: EventSource | None = None
    deprecatedFirstTimestamp: str | None = None
    deprecatedLastTimestamp: str | None = None
    deprecatedCount: int | None = None


class ServiceAccount(TypedObject):
    secrets: list[ObjectReference] | None = None
    imagePullSecrets: list[LocalObjectReference] | None = None
    automountServiceAccountToken: bool | None = None
