"""core/v1 wire types: Pod, Node, Namespace, Service, ConfigMap, Secret, Event, Binding,
PersistentVolume(Claim), Endpoints, ReplicationController, PodTemplate, ResourceQuota, LimitRange (layer L2).

Why: the schema of the served core kinds, for the unknown-field walk (fieldValidation), OpenAPI
generation and typed access in tests. Enumerated strings are `Literal`s so the generated schema
lists them; the request path validates dicts by hand (apiserver/strategies) with upstream's
messages, so these models are not constructed per request.

Every nested struct is a model named as its Go struct (`SecretVolumeSource`, `KeyToPath`, ...):
the decoder reports a wrongly typed value with the innermost struct's name and an unknown field
with its full path (`spec.volumes[0].secret.bogus`). Fields free-form upstream stay maps
(`map[string]string` such as a CSI volume's `volumeAttributes`).
"""

from __future__ import annotations

from typing import Literal

from minik3s.api.meta import (
    Condition,
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


class ConfigMapKeySelector(K8sModel):
    name: str | None = None
    key: str
    optional: bool | None = None


class SecretKeySelector(K8sModel):
    name: str | None = None
    key: str
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
    configMapKeyRef: ConfigMapKeySelector | None = None
    secretKeyRef: SecretKeySelector | None = None


class EnvVar(K8sModel):
    name: str
    value: str | None = None
    valueFrom: EnvVarSource | None = None


class ConfigMapEnvSource(K8sModel):
    name: str | None = None
    optional: bool | None = None


class SecretEnvSource(K8sModel):
    name: str | None = None
    optional: bool | None = None


class EnvFromSource(K8sModel):
    prefix: str | None = None
    configMapRef: ConfigMapEnvSource | None = None
    secretRef: SecretEnvSource | None = None


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


class SleepAction(K8sModel):
    seconds: int


class LifecycleHandler(K8sModel):
    exec: ExecAction | None = None
    httpGet: HTTPGetAction | None = None
    tcpSocket: TCPSocketAction | None = None
    sleep: SleepAction | None = None


class Lifecycle(K8sModel):
    postStart: LifecycleHandler | None = None
    preStop: LifecycleHandler | None = None
    stopSignal: str | None = None


class Capabilities(K8sModel):
    add: list[str] | None = None
    drop: list[str] | None = None


class SELinuxOptions(K8sModel):
    user: str | None = None
    role: str | None = None
    type: str | None = None
    level: str | None = None


class WindowsSecurityContextOptions(K8sModel):
    gmsaCredentialSpecName: str | None = None
    gmsaCredentialSpec: str | None = None
    runAsUserName: str | None = None
    hostProcess: bool | None = None


class SeccompProfile(K8sModel):
    type: str
    localhostProfile: str | None = None


class AppArmorProfile(K8sModel):
    type: str
    localhostProfile: str | None = None


class SecurityContext(K8sModel):
    capabilities: Capabilities | None = None
    privileged: bool | None = None
    seLinuxOptions: SELinuxOptions | None = None
    windowsOptions: WindowsSecurityContextOptions | None = None
    runAsUser: int | None = None
    runAsGroup: int | None = None
    runAsNonRoot: bool | None = None
    readOnlyRootFilesystem: bool | None = None
    allowPrivilegeEscalation: bool | None = None
    procMount: str | None = None
    seccompProfile: SeccompProfile | None = None
    appArmorProfile: AppArmorProfile | None = None


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


class PodAntiAffinity(K8sModel):
    requiredDuringSchedulingIgnoredDuringExecution: list[PodAffinityTerm] | None = None
    preferredDuringSchedulingIgnoredDuringExecution: list[WeightedPodAffinityTerm] | None = None


class Affinity(K8sModel):
    nodeAffinity: NodeAffinity | None = None
    podAffinity: PodAffinity | None = None
    podAntiAffinity: PodAntiAffinity | None = None


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


class Sysctl(K8sModel):
    name: str
    value: str


class PodSecurityContext(K8sModel):
    seLinuxOptions: SELinuxOptions | None = None
    windowsOptions: WindowsSecurityContextOptions | None = None
    runAsUser: int | None = None
    runAsGroup: int | None = None
    runAsNonRoot: bool | None = None
    supplementalGroups: list[int] | None = None
    supplementalGroupsPolicy: str | None = None
    fsGroup: int | None = None
    fsGroupChangePolicy: str | None = None
    sysctls: list[Sysctl] | None = None
    seccompProfile: SeccompProfile | None = None
    appArmorProfile: AppArmorProfile | None = None
    seLinuxChangePolicy: str | None = None


class PodDNSConfigOption(K8sModel):
    name: str | None = None
    value: str | None = None


class PodDNSConfig(K8sModel):
    nameservers: list[str] | None = None
    searches: list[str] | None = None
    options: list[PodDNSConfigOption] | None = None


class HostAlias(K8sModel):
    ip: str
    hostnames: list[str] | None = None


# --- volume sources -----------------------------------------------------------------------------


class HostPathVolumeSource(K8sModel):
    path: str
    type: str | None = None


class EmptyDirVolumeSource(K8sModel):
    medium: str | None = None
    sizeLimit: Quantity | None = None


class GCEPersistentDiskVolumeSource(K8sModel):
    pdName: str
    fsType: str | None = None
    partition: int | None = None
    readOnly: bool | None = None


class AWSElasticBlockStoreVolumeSource(K8sModel):
    volumeID: str
    fsType: str | None = None
    partition: int | None = None
    readOnly: bool | None = None


class GitRepoVolumeSource(K8sModel):
    repository: str
    revision: str | None = None
    directory: str | None = None


class KeyToPath(K8sModel):
    key: str
    path: str
    mode: int | None = None


class SecretVolumeSource(K8sModel):
    secretName: str | None = None
    items: list[KeyToPath] | None = None
    defaultMode: int | None = None
    optional: bool | None = None


class NFSVolumeSource(K8sModel):
    server: str
    path: str
    readOnly: bool | None = None


class ISCSIVolumeSource(K8sModel):
    targetPortal: str
    iqn: str
    lun: int
    iscsiInterface: str | None = None
    fsType: str | None = None
    readOnly: bool | None = None
    portals: list[str] | None = None
    chapAuthDiscovery: bool | None = None
    chapAuthSession: bool | None = None
    secretRef: LocalObjectReference | None = None
    initiatorName: str | None = None


class GlusterfsVolumeSource(K8sModel):
    endpoints: str
    path: str
    readOnly: bool | None = None


class PersistentVolumeClaimVolumeSource(K8sModel):
    claimName: str
    readOnly: bool | None = None


class RBDVolumeSource(K8sModel):
    monitors: list[str]
    image: str
    fsType: str | None = None
    pool: str | None = None
    user: str | None = None
    keyring: str | None = None
    secretRef: LocalObjectReference | None = None
    readOnly: bool | None = None


class FlexVolumeSource(K8sModel):
    driver: str
    fsType: str | None = None
    secretRef: LocalObjectReference | None = None
    readOnly: bool | None = None
    options: dict[str, str] | None = None


class CinderVolumeSource(K8sModel):
    volumeID: str
    fsType: str | None = None
    readOnly: bool | None = None
    secretRef: LocalObjectReference | None = None


class CephFSVolumeSource(K8sModel):
    monitors: list[str]
    path: str | None = None
    user: str | None = None
    secretFile: str | None = None
    secretRef: LocalObjectReference | None = None
    readOnly: bool | None = None


class FlockerVolumeSource(K8sModel):
    datasetName: str | None = None
    datasetUUID: str | None = None


class DownwardAPIVolumeFile(K8sModel):
    path: str
    fieldRef: ObjectFieldSelector | None = None
    resourceFieldRef: ResourceFieldSelector | None = None
    mode: int | None = None


class DownwardAPIVolumeSource(K8sModel):
    items: list[DownwardAPIVolumeFile] | None = None
    defaultMode: int | None = None


class FCVolumeSource(K8sModel):
    targetWWNs: list[str] | None = None
    lun: int | None = None
    fsType: str | None = None
    readOnly: bool | None = None
    wwids: list[str] | None = None


class AzureFileVolumeSource(K8sModel):
    secretName: str
    shareName: str
    readOnly: bool | None = None


class ConfigMapVolumeSource(K8sModel):
    name: str | None = None
    items: list[KeyToPath] | None = None
    defaultMode: int | None = None
    optional: bool | None = None


class VsphereVirtualDiskVolumeSource(K8sModel):
    volumePath: str
    fsType: str | None = None
    storagePolicyName: str | None = None
    storagePolicyID: str | None = None


class QuobyteVolumeSource(K8sModel):
    registry: str
    volume: str
    readOnly: bool | None = None
    user: str | None = None
    group: str | None = None
    tenant: str | None = None


class AzureDiskVolumeSource(K8sModel):
    diskName: str
    diskURI: str
    cachingMode: str | None = None
    fsType: str | None = None
    readOnly: bool | None = None
    kind: str | None = None


class PhotonPersistentDiskVolumeSource(K8sModel):
    pdID: str
    fsType: str | None = None


class SecretProjection(K8sModel):
    name: str | None = None
    items: list[KeyToPath] | None = None
    optional: bool | None = None


class DownwardAPIProjection(K8sModel):
    items: list[DownwardAPIVolumeFile] | None = None


class ConfigMapProjection(K8sModel):
    name: str | None = None
    items: list[KeyToPath] | None = None
    optional: bool | None = None


class ServiceAccountTokenProjection(K8sModel):
    audience: str | None = None
    expirationSeconds: int | None = None
    path: str


class ClusterTrustBundleProjection(K8sModel):
    name: str | None = None
    signerName: str | None = None
    labelSelector: LabelSelector | None = None
    optional: bool | None = None
    path: str


class VolumeProjection(K8sModel):
    secret: SecretProjection | None = None
    downwardAPI: DownwardAPIProjection | None = None
    configMap: ConfigMapProjection | None = None
    serviceAccountToken: ServiceAccountTokenProjection | None = None
    clusterTrustBundle: ClusterTrustBundleProjection | None = None


class ProjectedVolumeSource(K8sModel):
    sources: list[VolumeProjection] | None = None
    defaultMode: int | None = None


class PortworxVolumeSource(K8sModel):
    volumeID: str
    fsType: str | None = None
    readOnly: bool | None = None


class ScaleIOVolumeSource(K8sModel):
    gateway: str
    system: str
    secretRef: LocalObjectReference
    sslEnabled: bool | None = None
    protectionDomain: str | None = None
    storagePool: str | None = None
    storageMode: str | None = None
    volumeName: str | None = None
    fsType: str | None = None
    readOnly: bool | None = None


class StorageOSVolumeSource(K8sModel):
    volumeName: str | None = None
    volumeNamespace: str | None = None
    fsType: str | None = None
    readOnly: bool | None = None
    secretRef: LocalObjectReference | None = None


class CSIVolumeSource(K8sModel):
    driver: str
    readOnly: bool | None = None
    fsType: str | None = None
    volumeAttributes: dict[str, str] | None = None
    nodePublishSecretRef: LocalObjectReference | None = None


class TypedLocalObjectReference(K8sModel):
    apiGroup: str | None = None
    kind: str
    name: str


class TypedObjectReference(K8sModel):
    apiGroup: str | None = None
    kind: str
    name: str
    namespace: str | None = None


class VolumeResourceRequirements(K8sModel):
    limits: ResourceList | None = None
    requests: ResourceList | None = None


class PersistentVolumeClaimSpec(K8sModel):
    accessModes: list[str] | None = None
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements | None = None
    volumeName: str | None = None
    storageClassName: str | None = None
    volumeMode: str | None = None
    dataSource: TypedLocalObjectReference | None = None
    dataSourceRef: TypedObjectReference | None = None
    volumeAttributesClassName: str | None = None


class PersistentVolumeClaimTemplate(K8sModel):
    metadata: ObjectMeta | None = None
    spec: PersistentVolumeClaimSpec


class EphemeralVolumeSource(K8sModel):
    volumeClaimTemplate: PersistentVolumeClaimTemplate | None = None


class ImageVolumeSource(K8sModel):
    reference: str | None = None
    pullPolicy: str | None = None


class Volume(K8sModel):
    """A named volume and its source (upstream inlines VolumeSource into Volume, so a source's
    decoding errors name `Volume` for the source itself and the source's struct below it)."""

    name: str
    hostPath: HostPathVolumeSource | None = None
    emptyDir: EmptyDirVolumeSource | None = None
    gcePersistentDisk: GCEPersistentDiskVolumeSource | None = None
    awsElasticBlockStore: AWSElasticBlockStoreVolumeSource | None = None
    gitRepo: GitRepoVolumeSource | None = None
    secret: SecretVolumeSource | None = None
    nfs: NFSVolumeSource | None = None
    iscsi: ISCSIVolumeSource | None = None
    glusterfs: GlusterfsVolumeSource | None = None
    persistentVolumeClaim: PersistentVolumeClaimVolumeSource | None = None
    rbd: RBDVolumeSource | None = None
    flexVolume: FlexVolumeSource | None = None
    cinder: CinderVolumeSource | None = None
    cephfs: CephFSVolumeSource | None = None
    flocker: FlockerVolumeSource | None = None
    downwardAPI: DownwardAPIVolumeSource | None = None
    fc: FCVolumeSource | None = None
    azureFile: AzureFileVolumeSource | None = None
    configMap: ConfigMapVolumeSource | None = None
    vsphereVolume: VsphereVirtualDiskVolumeSource | None = None
    quobyte: QuobyteVolumeSource | None = None
    azureDisk: AzureDiskVolumeSource | None = None
    photonPersistentDisk: PhotonPersistentDiskVolumeSource | None = None
    projected: ProjectedVolumeSource | None = None
    portworxVolume: PortworxVolumeSource | None = None
    scaleIO: ScaleIOVolumeSource | None = None
    storageos: StorageOSVolumeSource | None = None
    csi: CSIVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None
    image: ImageVolumeSource | None = None


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


class ContainerStateWaiting(K8sModel):
    reason: str | None = None
    message: str | None = None


class ContainerStateRunning(K8sModel):
    startedAt: str | None = None


class ContainerStateTerminated(K8sModel):
    exitCode: int
    signal: int | None = None
    reason: str | None = None
    message: str | None = None
    startedAt: str | None = None
    finishedAt: str | None = None
    containerID: str | None = None


class ContainerState(K8sModel):
    waiting: ContainerStateWaiting | None = None
    running: ContainerStateRunning | None = None
    terminated: ContainerStateTerminated | None = None


class VolumeMountStatus(K8sModel):
    name: str
    mountPath: str
    readOnly: bool | None = None
    recursiveReadOnly: str | None = None


class LinuxContainerUser(K8sModel):
    uid: int
    gid: int
    supplementalGroups: list[int] | None = None


class ContainerUser(K8sModel):
    linux: LinuxContainerUser | None = None


class ResourceHealth(K8sModel):
    resourceID: str
    health: str | None = None


class ResourceStatus(K8sModel):
    name: str
    resources: list[ResourceHealth] | None = None


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
    volumeMounts: list[VolumeMountStatus] | None = None
    user: ContainerUser | None = None
    allocatedResourcesStatus: list[ResourceStatus] | None = None
    stopSignal: str | None = None


class HostIP(K8sModel):
    ip: str


class PodIP(K8sModel):
    ip: str


class PodResourceClaimStatus(K8sModel):
    name: str
    resourceClaimName: str | None = None


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
    podIPs: list[PodIP] | None = None
    startTime: str | None = None
    initContainerStatuses: list[ContainerStatus] | None = None
    containerStatuses: list[ContainerStatus] | None = None
    qosClass: Literal["Guaranteed", "Burstable", "BestEffort"] | None = None
    ephemeralContainerStatuses: list[ContainerStatus] | None = None
    resize: str | None = None
    resourceClaimStatuses: list[PodResourceClaimStatus] | None = None


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


class ConfigMapNodeConfigSource(K8sModel):
    namespace: str
    name: str
    uid: str | None = None
    resourceVersion: str | None = None
    kubeletConfigKey: str


class NodeConfigSource(K8sModel):
    configMap: ConfigMapNodeConfigSource | None = None


class NodeSpec(K8sModel):
    podCIDR: str | None = None
    podCIDRs: list[str] | None = None
    providerID: str | None = None
    unschedulable: bool | None = None
    taints: list[Taint] | None = None
    configSource: NodeConfigSource | None = None
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


class NodeSwapStatus(K8sModel):
    capacity: int | None = None


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
    swap: NodeSwapStatus | None = None


class ContainerImage(K8sModel):
    names: list[str] | None = None
    sizeBytes: int | None = None


class DaemonEndpoint(K8sModel):
    Port: int


class NodeDaemonEndpoints(K8sModel):
    kubeletEndpoint: DaemonEndpoint | None = None


class AttachedVolume(K8sModel):
    name: str
    devicePath: str


class NodeConfigStatus(K8sModel):
    assigned: NodeConfigSource | None = None
    active: NodeConfigSource | None = None
    lastKnownGood: NodeConfigSource | None = None
    error: str | None = None


class NodeRuntimeHandlerFeatures(K8sModel):
    recursiveReadOnlyMounts: bool | None = None
    userNamespaces: bool | None = None


class NodeRuntimeHandler(K8sModel):
    name: str | None = None
    features: NodeRuntimeHandlerFeatures | None = None


class NodeFeatures(K8sModel):
    supplementalGroupsPolicy: bool | None = None


class NodeStatus(K8sModel):
    capacity: ResourceList | None = None
    allocatable: ResourceList | None = None
    phase: str | None = None
    conditions: list[NodeCondition] | None = None
    addresses: list[NodeAddress] | None = None
    daemonEndpoints: NodeDaemonEndpoints | None = None
    nodeInfo: NodeSystemInfo | None = None
    images: list[ContainerImage] | None = None
    volumesInUse: list[str] | None = None
    volumesAttached: list[AttachedVolume] | None = None
    config: NodeConfigStatus | None = None
    runtimeHandlers: list[NodeRuntimeHandler] | None = None
    features: NodeFeatures | None = None


class Node(TypedObject):
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


# --- namespaces, config, services, events ------------------------------------------------------


class NamespaceSpec(K8sModel):
    finalizers: list[str] | None = None


class NamespaceCondition(K8sModel):
    type: str
    status: str
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class NamespaceStatus(K8sModel):
    phase: Literal["Active", "Terminating"] | None = None
    conditions: list[NamespaceCondition] | None = None


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


class ClientIPConfig(K8sModel):
    timeoutSeconds: int | None = None


class SessionAffinityConfig(K8sModel):
    clientIP: ClientIPConfig | None = None


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
    sessionAffinityConfig: SessionAffinityConfig | None = None
    ipFamilies: list[str] | None = None
    ipFamilyPolicy: str | None = None
    allocateLoadBalancerNodePorts: bool | None = None
    loadBalancerClass: str | None = None
    internalTrafficPolicy: Literal["Cluster", "Local"] | None = None
    trafficDistribution: str | None = None


class PortStatus(K8sModel):
    port: int
    protocol: str
    error: str | None = None


class LoadBalancerIngress(K8sModel):
    ip: str | None = None
    hostname: str | None = None
    ipMode: str | None = None
    ports: list[PortStatus] | None = None


class LoadBalancerStatus(K8sModel):
    ingress: list[LoadBalancerIngress] | None = None


class ServiceStatus(K8sModel):
    loadBalancer: LoadBalancerStatus | None = None
    conditions: list[Condition] | None = None


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


# --- persistent volumes and claims --------------------------------------------------------------


class SecretReference(K8sModel):
    name: str | None = None
    namespace: str | None = None


class ISCSIPersistentVolumeSource(K8sModel):
    targetPortal: str
    iqn: str
    lun: int
    iscsiInterface: str | None = None
    fsType: str | None = None
    readOnly: bool | None = None
    portals: list[str] | None = None
    chapAuthDiscovery: bool | None = None
    chapAuthSession: bool | None = None
    secretRef: SecretReference | None = None
    initiatorName: str | None = None


class GlusterfsPersistentVolumeSource(K8sModel):
    endpoints: str
    path: str
    readOnly: bool | None = None
    endpointsNamespace: str | None = None


class RBDPersistentVolumeSource(K8sModel):
    monitors: list[str]
    image: str
    fsType: str | None = None
    pool: str | None = None
    user: str | None = None
    keyring: str | None = None
    secretRef: SecretReference | None = None
    readOnly: bool | None = None


class FlexPersistentVolumeSource(K8sModel):
    driver: str
    fsType: str | None = None
    secretRef: SecretReference | None = None
    readOnly: bool | None = None
    options: dict[str, str] | None = None


class CinderPersistentVolumeSource(K8sModel):
    volumeID: str
    fsType: str | None = None
    readOnly: bool | None = None
    secretRef: SecretReference | None = None


class CephFSPersistentVolumeSource(K8sModel):
    monitors: list[str]
    path: str | None = None
    user: str | None = None
    secretFile: str | None = None
    secretRef: SecretReference | None = None
    readOnly: bool | None = None


class AzureFilePersistentVolumeSource(K8sModel):
    secretName: str
    shareName: str
    readOnly: bool | None = None
    secretNamespace: str | None = None


class ScaleIOPersistentVolumeSource(K8sModel):
    gateway: str
    system: str
    secretRef: SecretReference
    sslEnabled: bool | None = None
    protectionDomain: str | None = None
    storagePool: str | None = None
    storageMode: str | None = None
    volumeName: str | None = None
    fsType: str | None = None
    readOnly: bool | None = None


class LocalVolumeSource(K8sModel):
    path: str
    fsType: str | None = None


class StorageOSPersistentVolumeSource(K8sModel):
    volumeName: str | None = None
    volumeNamespace: str | None = None
    fsType: str | None = None
    readOnly: bool | None = None
    secretRef: ObjectReference | None = None


class CSIPersistentVolumeSource(K8sModel):
    driver: str
    volumeHandle: str
    readOnly: bool | None = None
    fsType: str | None = None
    volumeAttributes: dict[str, str] | None = None
    controllerPublishSecretRef: SecretReference | None = None
    nodeStageSecretRef: SecretReference | None = None
    nodePublishSecretRef: SecretReference | None = None
    controllerExpandSecretRef: SecretReference | None = None
    nodeExpandSecretRef: SecretReference | None = None


class VolumeNodeAffinity(K8sModel):
    required: NodeSelector | None = None


class PersistentVolumeSpec(K8sModel):
    """Upstream inlines PersistentVolumeSource (the `hostPath` ... `csi` fields) into the spec."""

    capacity: ResourceList | None = None
    gcePersistentDisk: GCEPersistentDiskVolumeSource | None = None
    awsElasticBlockStore: AWSElasticBlockStoreVolumeSource | None = None
    hostPath: HostPathVolumeSource | None = None
    glusterfs: GlusterfsPersistentVolumeSource | None = None
    nfs: NFSVolumeSource | None = None
    rbd: RBDPersistentVolumeSource | None = None
    iscsi: ISCSIPersistentVolumeSource | None = None
    cinder: CinderPersistentVolumeSource | None = None
    cephfs: CephFSPersistentVolumeSource | None = None
    fc: FCVolumeSource | None = None
    flocker: FlockerVolumeSource | None = None
    flexVolume: FlexPersistentVolumeSource | None = None
    azureFile: AzureFilePersistentVolumeSource | None = None
    vsphereVolume: VsphereVirtualDiskVolumeSource | None = None
    quobyte: QuobyteVolumeSource | None = None
    azureDisk: AzureDiskVolumeSource | None = None
    photonPersistentDisk: PhotonPersistentDiskVolumeSource | None = None
    portworxVolume: PortworxVolumeSource | None = None
    scaleIO: ScaleIOPersistentVolumeSource | None = None
    local: LocalVolumeSource | None = None
    storageos: StorageOSPersistentVolumeSource | None = None
    csi: CSIPersistentVolumeSource | None = None
    accessModes: list[str] | None = None
    claimRef: ObjectReference | None = None
    persistentVolumeReclaimPolicy: str | None = None
    storageClassName: str | None = None
    mountOptions: list[str] | None = None
    volumeMode: str | None = None
    nodeAffinity: VolumeNodeAffinity | None = None
    volumeAttributesClassName: str | None = None


class PersistentVolumeStatus(K8sModel):
    phase: str | None = None
    message: str | None = None
    reason: str | None = None
    lastPhaseTransitionTime: str | None = None


class PersistentVolume(TypedObject):
    spec: PersistentVolumeSpec | None = None
    status: PersistentVolumeStatus | None = None


class PersistentVolumeClaimCondition(K8sModel):
    type: str
    status: str
    lastProbeTime: str | None = None
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class ModifyVolumeStatus(K8sModel):
    targetVolumeAttributesClassName: str | None = None
    status: str


class PersistentVolumeClaimStatus(K8sModel):
    phase: str | None = None
    accessModes: list[str] | None = None
    capacity: ResourceList | None = None
    conditions: list[PersistentVolumeClaimCondition] | None = None
    allocatedResources: ResourceList | None = None
    allocatedResourceStatuses: dict[str, str] | None = None
    currentVolumeAttributesClassName: str | None = None
    modifyVolumeStatus: ModifyVolumeStatus | None = None


class PersistentVolumeClaim(TypedObject):
    spec: PersistentVolumeClaimSpec | None = None
    status: PersistentVolumeClaimStatus | None = None


# --- endpoints, replication controllers, quotas, limit ranges ------------------------------------


class EndpointAddress(K8sModel):
    ip: str
    hostname: str | None = None
    nodeName: str | None = None
    targetRef: ObjectReference | None = None


class EndpointPort(K8sModel):
    name: str | None = None
    port: int
    protocol: str | None = None
    appProtocol: str | None = None


class EndpointSubset(K8sModel):
    addresses: list[EndpointAddress] | None = None
    notReadyAddresses: list[EndpointAddress] | None = None
    ports: list[EndpointPort] | None = None


class Endpoints(TypedObject):
    subsets: list[EndpointSubset] | None = None


class ReplicationControllerSpec(K8sModel):
    replicas: int | None = None
    minReadySeconds: int | None = None
    selector: dict[str, str] | None = None
    template: PodTemplateSpec | None = None


class ReplicationControllerCondition(K8sModel):
    type: str
    status: str
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class ReplicationControllerStatus(K8sModel):
    replicas: int
    fullyLabeledReplicas: int | None = None
    readyReplicas: int | None = None
    availableReplicas: int | None = None
    observedGeneration: int | None = None
    conditions: list[ReplicationControllerCondition] | None = None


class ReplicationController(TypedObject):
    spec: ReplicationControllerSpec | None = None
    status: ReplicationControllerStatus | None = None


class ScopedResourceSelectorRequirement(K8sModel):
    scopeName: str
    operator: str
    values: list[str] | None = None


class ScopeSelector(K8sModel):
    matchExpressions: list[ScopedResourceSelectorRequirement] | None = None


class ResourceQuotaSpec(K8sModel):
    hard: ResourceList | None = None
    scopes: list[str] | None = None
    scopeSelector: ScopeSelector | None = None


class ResourceQuotaStatus(K8sModel):
    hard: ResourceList | None = None
    used: ResourceList | None = None


class ResourceQuota(TypedObject):
    spec: ResourceQuotaSpec | None = None
    status: ResourceQuotaStatus | None = None


class LimitRangeItem(K8sModel):
    type: str
    max: ResourceList | None = None
    min: ResourceList | None = None
    default: ResourceList | None = None
    defaultRequest: ResourceList | None = None
    maxLimitRequestRatio: ResourceList | None = None


class LimitRangeSpec(K8sModel):
    limits: list[LimitRangeItem]


class LimitRange(TypedObject):
    spec: LimitRangeSpec | None = None
