"""Field tables for the Kubernetes protobuf messages minik3s decodes (layer L4; pure data).

Written by hand from the field numbers in the upstream `.proto` definitions
(k8s.io/api/{core,apps,autoscaling,batch,policy,scheduling}/v1/generated.proto, autoscaling/v2,
k8s.io/apimachinery/pkg/apis/meta/v1, api/resource, util/intstr, runtime) — not generated from
them. They cover what kubectl 1.33 sends as protobuf (`kubectl create namespace | priorityclass |
configmap | secret | deployment | job | cronjob | service | serviceaccount | quota | pdb`,
`kubectl debug node/<node>` (a Pod), `kubectl certificate approve|deny`,
`kubectl autoscale` (autoscaling/v2, and its v1 fallback), DELETE
bodies, evictions) with the commonly used PodSpec/Container fields. Unknown field numbers are
skipped, as gogo-protobuf does.

Table syntax, one field per `;`-separated entry: `<number> <jsonName> <type>[*][!]`
  types: s string · b bytes (base64 in JSON) · bool · i32 · i64 · T metav1.Time · MT MicroTime ·
         Q resource.Quantity · IOS IntOrString · raw RawExtension · f1 FieldsV1 ·
         map:s / map:b / map:Q  map<string, …> · <MessageName> a nested message ·
         ^<MessageName> an embedded Go struct (its fields are inlined into the parent JSON)
  `*` repeated · `!` keep zero values (Go pointer fields, or JSON fields without omitempty);
  without `!`, zero scalars and empty messages are dropped (gogo writes non-pointer fields even
  when empty, so an empty string on the wire usually means "unset").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

_SPECS: dict[str, str] = {
    # ---- runtime / meta.k8s.io/v1 ------------------------------------------------------------
    "Unknown": "1 typeMeta TypeMeta; 2 raw b; 3 contentEncoding s; 4 contentType s",
    "TypeMeta": "1 apiVersion s; 2 kind s",
    "ObjectMeta": (
        "1 name s; 2 generateName s; 3 namespace s; 4 selfLink s; 5 uid s; 6 resourceVersion s; "
        "7 generation i64; 8 creationTimestamp T; 9 deletionTimestamp T; 10 deletionGracePeriodSeconds i64!; "
        "11 labels map:s; 12 annotations map:s; 13 ownerReferences OwnerReference*; 14 finalizers s*; "
        "17 managedFields ManagedFieldsEntry*"
    ),
    "OwnerReference": "5 apiVersion s; 1 kind s; 3 name s; 4 uid s; 6 controller bool!; 7 blockOwnerDeletion bool!",
    "ManagedFieldsEntry": (
        "1 manager s; 2 operation s; 3 apiVersion s; 4 time T; 6 fieldsType s; 7 fieldsV1 f1; 8 subresource s"
    ),
    "LabelSelector": "1 matchLabels map:s; 2 matchExpressions LabelSelectorRequirement*",
    "LabelSelectorRequirement": "1 key s; 2 operator s; 3 values s*",
    "DeleteOptions": (
        "1 gracePeriodSeconds i64!; 2 preconditions Preconditions!; 3 orphanDependents bool!; "
        "4 propagationPolicy s!; 5 dryRun s*; 6 ignoreStoreReadErrorWithClusterBreakingPotential bool!"
    ),
    "Preconditions": "1 uid s!; 2 resourceVersion s!",
    "Condition": (
        "1 type s; 2 status s; 3 observedGeneration i64; 4 lastTransitionTime T; 5 reason s; 6 message s"
    ),
    # ---- core/v1 -------------------------------------------------------------------------------
    "Namespace": "1 metadata ObjectMeta; 2 spec NamespaceSpec; 3 status NamespaceStatus",
    "NamespaceSpec": "1 finalizers s*",
    "NamespaceStatus": "1 phase s; 2 conditions NamespaceCondition*",
    "NamespaceCondition": "1 type s; 2 status s; 4 lastTransitionTime T; 5 reason s; 6 message s",
    "ConfigMap": "1 metadata ObjectMeta; 2 data map:s; 3 binaryData map:b; 4 immutable bool!",
    "Secret": "1 metadata ObjectMeta; 2 data map:b; 3 type s; 4 stringData map:s; 5 immutable bool!",
    "ServiceAccount": (
        "1 metadata ObjectMeta; 2 secrets ObjectReference*; 3 imagePullSecrets LocalObjectReference*; "
        "4 automountServiceAccountToken bool!"
    ),
    "ObjectReference": (
        "1 kind s; 2 namespace s; 3 name s; 4 uid s; 5 apiVersion s; 6 resourceVersion s; 7 fieldPath s"
    ),
    "LocalObjectReference": "1 name s",
    "Binding": "1 metadata ObjectMeta; 2 target ObjectReference",
    "Service": "1 metadata ObjectMeta; 2 spec ServiceSpec; 3 status ServiceStatus",
    "ServiceSpec": (
        "1 ports ServicePort*; 2 selector map:s; 3 clusterIP s; 18 clusterIPs s*; 4 type s; 5 externalIPs s*; "
        "7 sessionAffinity s; 8 loadBalancerIP s; 9 loadBalancerSourceRanges s*; 10 externalName s; "
        "11 externalTrafficPolicy s; 12 healthCheckNodePort i32; 13 publishNotReadyAddresses bool; "
        "14 sessionAffinityConfig SessionAffinityConfig!; 19 ipFamilies s*; 17 ipFamilyPolicy s!; "
        "20 allocateLoadBalancerNodePorts bool!; 21 loadBalancerClass s!; 22 internalTrafficPolicy s!; "
        "23 trafficDistribution s!"
    ),
    "ServicePort": "1 name s; 2 protocol s; 6 appProtocol s!; 3 port i32!; 4 targetPort IOS; 5 nodePort i32",
    "SessionAffinityConfig": "1 clientIP ClientIPConfig!",
    "ClientIPConfig": "1 timeoutSeconds i32!",
    "ServiceStatus": "1 loadBalancer LoadBalancerStatus; 2 conditions Condition*",
    "LoadBalancerStatus": "1 ingress LoadBalancerIngress*",
    "LoadBalancerIngress": "1 ip s; 2 hostname s; 3 ipMode s!; 4 ports PortStatus*",
    "PortStatus": "1 port i32!; 2 protocol s!; 3 error s!",
    "ResourceQuota": "1 metadata ObjectMeta; 2 spec ResourceQuotaSpec; 3 status ResourceQuotaStatus",
    "ResourceQuotaSpec": "1 hard map:Q; 2 scopes s*; 3 scopeSelector ScopeSelector!",
    "ResourceQuotaStatus": "1 hard map:Q; 2 used map:Q",
    "ScopeSelector": "1 matchExpressions ScopedResourceSelectorRequirement*",
    "ScopedResourceSelectorRequirement": "1 scopeName s; 2 operator s; 3 values s*",
    "PodTemplateSpec": "1 metadata ObjectMeta; 2 spec PodSpec",
    # certificates.k8s.io/v1 (`kubectl certificate approve|deny` PUTs the CSR to /approval);
    # spec.extra (6, a map of ExtraValue messages) is not read: the server sets it on create
    # and keeps it on every update
    "CertificateSigningRequest": "1 metadata ObjectMeta; 2 spec CSRSpec; 3 status CSRStatus",
    "CSRSpec": (
        "1 request b; 2 username s; 3 uid s; 4 groups s*; 5 usages s*; 7 signerName s; 8 expirationSeconds i32!"
    ),
    "CSRStatus": "1 conditions CSRCondition*; 2 certificate b",
    "CSRCondition": "1 type s; 6 status s; 2 reason s; 3 message s; 4 lastUpdateTime T; 5 lastTransitionTime T",
    # a Pod's status (3) is not read: a create resets it, as upstream's PrepareForCreate
    "Pod": "1 metadata ObjectMeta; 2 spec PodSpec",
    "PodSpec": (
        "1 volumes Volume*; 20 initContainers Container*; 2 containers Container*; "
        "34 ephemeralContainers EphemeralContainer*; 3 restartPolicy s; 4 terminationGracePeriodSeconds i64!; "
        "5 activeDeadlineSeconds i64!; 6 dnsPolicy s; 7 nodeSelector map:s; 8 serviceAccountName s; "
        "9 serviceAccount s; 21 automountServiceAccountToken bool!; 10 nodeName s; 11 hostNetwork bool; "
        "12 hostPID bool; 13 hostIPC bool; 27 shareProcessNamespace bool!; 14 securityContext PodSecurityContext!; "
        "15 imagePullSecrets LocalObjectReference*; 16 hostname s; 17 subdomain s; 18 affinity Affinity!; "
        "19 schedulerName s; 22 tolerations Toleration*; 23 hostAliases HostAlias*; 24 priorityClassName s; "
        "25 priority i32!; 26 dnsConfig PodDNSConfig!; 28 readinessGates PodReadinessGate*; "
        "29 runtimeClassName s!; 30 enableServiceLinks bool!; 31 preemptionPolicy s!; 32 overhead map:Q; "
        "33 topologySpreadConstraints TopologySpreadConstraint*; 35 setHostnameAsFQDN bool!; 36 os PodOS!; "
        "37 hostUsers bool!; 38 schedulingGates PodSchedulingGate*; 39 resourceClaims PodResourceClaim*; "
        "40 resources ResourceRequirements!"
    ),
    "Container": (
        "1 name s!; 2 image s; 3 command s*; 4 args s*; 5 workingDir s; 6 ports ContainerPort*; "
        "19 envFrom EnvFromSource*; 7 env EnvVar*; 8 resources ResourceRequirements; "
        "23 resizePolicy ContainerResizePolicy*; 24 restartPolicy s!; 9 volumeMounts VolumeMount*; "
        "21 volumeDevices VolumeDevice*; 10 livenessProbe Probe!; 11 readinessProbe Probe!; "
        "22 startupProbe Probe!; 12 lifecycle Lifecycle!; 13 terminationMessagePath s; "
        "20 terminationMessagePolicy s; 14 imagePullPolicy s; 15 securityContext SecurityContext!; "
        "16 stdin bool; 17 stdinOnce bool; 18 tty bool"
    ),
    "EphemeralContainer": "1 ephemeralContainerCommon ^Container; 2 targetContainerName s",
    "ContainerPort": "1 name s; 2 hostPort i32; 3 containerPort i32!; 4 protocol s; 5 hostIP s",
    "ContainerResizePolicy": "1 resourceName s!; 2 restartPolicy s!",
    "EnvVar": "1 name s!; 2 value s; 3 valueFrom EnvVarSource!",
    "EnvVarSource": (
        "1 fieldRef ObjectFieldSelector!; 2 resourceFieldRef ResourceFieldSelector!; "
        "3 configMapKeyRef ConfigMapKeySelector!; 4 secretKeyRef SecretKeySelector!"
    ),
    "ObjectFieldSelector": "1 apiVersion s; 2 fieldPath s!",
    "ResourceFieldSelector": "1 containerName s; 2 resource s!; 3 divisor Q",
    "ConfigMapKeySelector": "1 localObjectReference ^LocalObjectReference; 2 key s!; 3 optional bool!",
    "SecretKeySelector": "1 localObjectReference ^LocalObjectReference; 2 key s!; 3 optional bool!",
    "EnvFromSource": "1 prefix s; 2 configMapRef ConfigMapEnvSource!; 3 secretRef SecretEnvSource!",
    "ConfigMapEnvSource": "1 localObjectReference ^LocalObjectReference; 2 optional bool!",
    "SecretEnvSource": "1 localObjectReference ^LocalObjectReference; 2 optional bool!",
    "ResourceRequirements": "1 limits map:Q; 2 requests map:Q; 3 claims ResourceClaim*",
    "ResourceClaim": "1 name s!; 2 request s",
    "VolumeMount": (
        "1 name s!; 2 readOnly bool; 7 recursiveReadOnly s!; 3 mountPath s!; 4 subPath s; "
        "5 mountPropagation s!; 6 subPathExpr s"
    ),
    "VolumeDevice": "1 name s!; 2 devicePath s!",
    "Probe": (
        "1 handler ^ProbeHandler; 2 initialDelaySeconds i32; 3 timeoutSeconds i32; 4 periodSeconds i32; "
        "5 successThreshold i32; 6 failureThreshold i32; 7 terminationGracePeriodSeconds i64!"
    ),
    "ProbeHandler": "1 exec ExecAction!; 2 httpGet HTTPGetAction!; 3 tcpSocket TCPSocketAction!; 4 grpc GRPCAction!",
    "ExecAction": "1 command s*",
    "HTTPGetAction": "1 path s; 2 port IOS!; 3 host s; 4 scheme s; 5 httpHeaders HTTPHeader*",
    "HTTPHeader": "1 name s!; 2 value s!",
    "TCPSocketAction": "1 port IOS!; 2 host s",
    "GRPCAction": "1 port i32!; 2 service s!",
    "Lifecycle": "1 postStart LifecycleHandler!; 2 preStop LifecycleHandler!; 3 stopSignal s!",
    "LifecycleHandler": (
        "1 exec ExecAction!; 2 httpGet HTTPGetAction!; 3 tcpSocket TCPSocketAction!; 4 sleep SleepAction!"
    ),
    "SleepAction": "1 seconds i64!",
    "SecurityContext": (
        "1 capabilities Capabilities!; 2 privileged bool!; 3 seLinuxOptions SELinuxOptions!; "
        "10 windowsOptions WindowsSecurityContextOptions!; 4 runAsUser i64!; 8 runAsGroup i64!; "
        "5 runAsNonRoot bool!; 6 readOnlyRootFilesystem bool!; 7 allowPrivilegeEscalation bool!; "
        "9 procMount s!; 11 seccompProfile SeccompProfile!; 12 appArmorProfile AppArmorProfile!"
    ),
    "Capabilities": "1 add s*; 2 drop s*",
    "SELinuxOptions": "1 user s; 2 role s; 3 type s; 4 level s",
    "WindowsSecurityContextOptions": (
        "1 gmsaCredentialSpecName s!; 2 gmsaCredentialSpec s!; 3 runAsUserName s!; 4 hostProcess bool!"
    ),
    "SeccompProfile": "1 type s!; 2 localhostProfile s!",
    "AppArmorProfile": "1 type s!; 2 localhostProfile s!",
    "PodSecurityContext": (
        "1 seLinuxOptions SELinuxOptions!; 8 windowsOptions WindowsSecurityContextOptions!; 2 runAsUser i64!; "
        "6 runAsGroup i64!; 3 runAsNonRoot bool!; 4 supplementalGroups i64*; "
        "12 supplementalGroupsPolicy s!; 5 fsGroup i64!; 7 sysctls Sysctl*; 9 fsGroupChangePolicy s!; "
        "10 seccompProfile SeccompProfile!; 11 appArmorProfile AppArmorProfile!; 13 seLinuxChangePolicy s!"
    ),
    "Sysctl": "1 name s!; 2 value s!",
    "PodDNSConfig": "1 nameservers s*; 2 searches s*; 3 options PodDNSConfigOption*",
    "PodDNSConfigOption": "1 name s; 2 value s!",
    "PodReadinessGate": "1 conditionType s!",
    "PodSchedulingGate": "1 name s!",
    "PodOS": "1 name s!",
    "PodResourceClaim": "1 name s!; 3 resourceClaimName s!; 4 resourceClaimTemplateName s!",
    "HostAlias": "1 ip s!; 2 hostnames s*",
    "Toleration": "1 key s; 2 operator s; 3 value s; 4 effect s; 5 tolerationSeconds i64!",
    "Affinity": "1 nodeAffinity NodeAffinity!; 2 podAffinity PodAffinity!; 3 podAntiAffinity PodAntiAffinity!",
    "NodeAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution NodeSelector!; "
        "2 preferredDuringSchedulingIgnoredDuringExecution PreferredSchedulingTerm*"
    ),
    "NodeSelector": "1 nodeSelectorTerms NodeSelectorTerm*",
    "NodeSelectorTerm": "1 matchExpressions NodeSelectorRequirement*; 2 matchFields NodeSelectorRequirement*",
    "NodeSelectorRequirement": "1 key s!; 2 operator s!; 3 values s*",
    "PreferredSchedulingTerm": "1 weight i32!; 2 preference NodeSelectorTerm!",
    "PodAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution PodAffinityTerm*; "
        "2 preferredDuringSchedulingIgnoredDuringExecution WeightedPodAffinityTerm*"
    ),
    "PodAntiAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution PodAffinityTerm*; "
        "2 preferredDuringSchedulingIgnoredDuringExecution WeightedPodAffinityTerm*"
    ),
    "PodAffinityTerm": (
        "1 labelSelector LabelSelector!; 2 namespaces s*; 3 topologyKey s!; 4 namespaceSelector LabelSelector!; "
        "5 matchLabelKeys s*; 6 mismatchLabelKeys s*"
    ),
    "WeightedPodAffinityTerm": "1 weight i32!; 2 podAffinityTerm PodAffinityTerm!",
    "TopologySpreadConstraint": (
        "1 maxSkew i32!; 2 topologyKey s!; 3 whenUnsatisfiable s!; 4 labelSelector LabelSelector!; "
        "5 minDomains i32!; 6 nodeAffinityPolicy s!; 7 nodeTaintsPolicy s!; 8 matchLabelKeys s*"
    ),
    "Volume": "1 name s!; 2 volumeSource ^VolumeSource",
    "VolumeSource": (
        "1 hostPath HostPathVolumeSource!; 2 emptyDir EmptyDirVolumeSource!; 6 secret SecretVolumeSource!; "
        "7 nfs NFSVolumeSource!; 10 persistentVolumeClaim PersistentVolumeClaimVolumeSource!; "
        "16 downwardAPI DownwardAPIVolumeSource!; 19 configMap ConfigMapVolumeSource!; "
        "26 projected ProjectedVolumeSource!; 28 csi CSIVolumeSource!; 30 image ImageVolumeSource!"
    ),
    "ImageVolumeSource": "1 reference s; 2 pullPolicy s",
    "HostPathVolumeSource": "1 path s!; 2 type s!",
    "EmptyDirVolumeSource": "1 medium s; 2 sizeLimit Q!",
    "SecretVolumeSource": "1 secretName s; 2 items KeyToPath*; 3 defaultMode i32!; 4 optional bool!",
    "NFSVolumeSource": "1 server s!; 2 path s!; 3 readOnly bool",
    "PersistentVolumeClaimVolumeSource": "1 claimName s!; 2 readOnly bool",
    "ConfigMapVolumeSource": (
        "1 localObjectReference ^LocalObjectReference; 2 items KeyToPath*; 3 defaultMode i32!; 4 optional bool!"
    ),
    "KeyToPath": "1 key s!; 2 path s!; 3 mode i32!",
    "DownwardAPIVolumeSource": "1 items DownwardAPIVolumeFile*; 2 defaultMode i32!",
    "DownwardAPIVolumeFile": (
        "1 path s!; 2 fieldRef ObjectFieldSelector!; 3 resourceFieldRef ResourceFieldSelector!; 4 mode i32!"
    ),
    "ProjectedVolumeSource": "1 sources VolumeProjection*; 2 defaultMode i32!",
    "VolumeProjection": (
        "1 secret SecretProjection!; 2 downwardAPI DownwardAPIProjection!; 3 configMap ConfigMapProjection!; "
        "4 serviceAccountToken ServiceAccountTokenProjection!"
    ),
    "SecretProjection": "1 localObjectReference ^LocalObjectReference; 2 items KeyToPath*; 4 optional bool!",
    "ConfigMapProjection": "1 localObjectReference ^LocalObjectReference; 2 items KeyToPath*; 4 optional bool!",
    "DownwardAPIProjection": "1 items DownwardAPIVolumeFile*",
    "ServiceAccountTokenProjection": "1 audience s; 2 expirationSeconds i64!; 3 path s!",
    "CSIVolumeSource": "1 driver s!; 2 readOnly bool!; 3 fsType s!; 4 volumeAttributes map:s; 5 nodePublishSecretRef LocalObjectReference!",
    # ---- apps/v1 -------------------------------------------------------------------------------
    "Deployment": "1 metadata ObjectMeta; 2 spec DeploymentSpec; 3 status DeploymentStatus",
    "DeploymentSpec": (
        "1 replicas i32!; 2 selector LabelSelector!; 3 template PodTemplateSpec; 4 strategy DeploymentStrategy; "
        "5 minReadySeconds i32; 6 revisionHistoryLimit i32!; 7 paused bool; 9 progressDeadlineSeconds i32!"
    ),
    "DeploymentStrategy": "1 type s; 2 rollingUpdate RollingUpdateDeployment!",
    "RollingUpdateDeployment": "1 maxUnavailable IOS!; 2 maxSurge IOS!",
    "DeploymentStatus": (
        "1 observedGeneration i64; 2 replicas i32; 3 updatedReplicas i32; 7 readyReplicas i32; "
        "4 availableReplicas i32; 5 unavailableReplicas i32; 9 terminatingReplicas i32!; "
        "6 conditions DeploymentCondition*; 8 collisionCount i32!"
    ),
    "DeploymentCondition": (
        "1 type s!; 2 status s!; 6 lastUpdateTime T; 7 lastTransitionTime T; 4 reason s; 5 message s"
    ),
    "ReplicaSet": "1 metadata ObjectMeta; 2 spec ReplicaSetSpec; 3 status ReplicaSetStatus",
    "ReplicaSetSpec": "1 replicas i32!; 4 minReadySeconds i32; 2 selector LabelSelector!; 3 template PodTemplateSpec",
    "ReplicaSetStatus": (
        "1 replicas i32!; 2 fullyLabeledReplicas i32; 4 readyReplicas i32; 5 availableReplicas i32; "
        "7 terminatingReplicas i32!; 3 observedGeneration i64"
    ),
    # ---- batch/v1 ------------------------------------------------------------------------------
    "Job": "1 metadata ObjectMeta; 2 spec JobSpec; 3 status JobStatus",
    "JobSpec": (
        "1 parallelism i32!; 2 completions i32!; 3 activeDeadlineSeconds i64!; 11 podFailurePolicy PodFailurePolicy!; "
        "16 successPolicy SuccessPolicy!; 7 backoffLimit i32!; 12 backoffLimitPerIndex i32!; "
        "13 maxFailedIndexes i32!; 4 selector LabelSelector!; 5 manualSelector bool!; 6 template PodTemplateSpec; "
        "8 ttlSecondsAfterFinished i32!; 9 completionMode s!; 10 suspend bool!; 14 podReplacementPolicy s!; "
        "15 managedBy s!"
    ),
    "PodFailurePolicy": "1 rules PodFailurePolicyRule*",
    "PodFailurePolicyRule": (
        "1 action s!; 2 onExitCodes PodFailurePolicyOnExitCodesRequirement!; "
        "3 onPodConditions PodFailurePolicyOnPodConditionsPattern*"
    ),
    "PodFailurePolicyOnExitCodesRequirement": "1 containerName s!; 2 operator s!; 3 values i32*",
    "PodFailurePolicyOnPodConditionsPattern": "1 type s!; 2 status s!",
    "SuccessPolicy": "1 rules SuccessPolicyRule*",
    "SuccessPolicyRule": "1 succeededIndexes s!; 2 succeededCount i32!",
    "JobStatus": (
        "1 conditions JobCondition*; 2 startTime T; 3 completionTime T; 4 active i32; 5 succeeded i32; "
        "6 failed i32; 10 terminating i32!; 7 completedIndexes s; 11 failedIndexes s!; "
        "9 uncountedTerminatedPods UncountedTerminatedPods!; 8 ready i32!"
    ),
    "JobCondition": (
        "1 type s!; 2 status s!; 3 lastProbeTime T; 4 lastTransitionTime T; 5 reason s; 6 message s"
    ),
    "UncountedTerminatedPods": "1 succeeded s*; 2 failed s*",
    "CronJob": "1 metadata ObjectMeta; 2 spec CronJobSpec; 3 status CronJobStatus",
    "CronJobSpec": (
        "1 schedule s!; 8 timeZone s!; 2 startingDeadlineSeconds i64!; 3 concurrencyPolicy s; 4 suspend bool!; "
        "5 jobTemplate JobTemplateSpec; 6 successfulJobsHistoryLimit i32!; 7 failedJobsHistoryLimit i32!"
    ),
    "JobTemplateSpec": "1 metadata ObjectMeta; 2 spec JobSpec",
    "CronJobStatus": "1 active ObjectReference*; 4 lastScheduleTime T; 5 lastSuccessfulTime T",
    # ---- scheduling.k8s.io/v1, policy/v1 -------------------------------------------------------
    "PriorityClass": (
        "1 metadata ObjectMeta; 2 value i32!; 3 globalDefault bool; 4 description s; 5 preemptionPolicy s!"
    ),
    "PodDisruptionBudget": (
        "1 metadata ObjectMeta; 2 spec PodDisruptionBudgetSpec; 3 status PodDisruptionBudgetStatus"
    ),
    "PodDisruptionBudgetSpec": (
        "1 minAvailable IOS!; 2 selector LabelSelector!; 3 maxUnavailable IOS!; 4 unhealthyPodEvictionPolicy s!"
    ),
    "PodDisruptionBudgetStatus": (
        "1 observedGeneration i64; 2 disruptedPods map:T; 3 disruptionsAllowed i32!; 4 currentHealthy i32!; "
        "5 desiredHealthy i32!; 6 expectedPods i32!; 7 conditions Condition*"
    ),
    "Eviction": "1 metadata ObjectMeta; 2 deleteOptions DeleteOptions!",
    # ---- rbac.authorization.k8s.io/v1 (kubectl create role|clusterrole|rolebinding|clusterrolebinding)
    "PolicyRule": "1 verbs s*; 2 apiGroups s*; 3 resources s*; 4 resourceNames s*; 5 nonResourceURLs s*",
    "AggregationRule": "1 clusterRoleSelectors LabelSelector*",
    "Role": "1 metadata ObjectMeta; 2 rules PolicyRule*",
    "ClusterRole": "1 metadata ObjectMeta; 2 rules PolicyRule*; 3 aggregationRule AggregationRule",
    "Subject": "1 kind s; 2 apiGroup s; 3 name s; 4 namespace s",
    "RoleRef": "1 apiGroup s; 2 kind s; 3 name s",
    "RoleBinding": "1 metadata ObjectMeta; 2 subjects Subject*; 3 roleRef RoleRef!",
    # ---- networking.k8s.io/v1 (kubectl create ingress) ------------------------------------------
    "Ingress": "1 metadata ObjectMeta; 2 spec IngressSpec; 3 status IngressStatus",
    "IngressSpec": (
        "1 defaultBackend IngressBackend; 2 tls IngressTLS*; 3 rules IngressRule*; 4 ingressClassName s!"
    ),
    "IngressBackend": "1 resource TypedLocalObjectReference; 4 service IngressServiceBackend",
    "TypedLocalObjectReference": "1 apiGroup s!; 2 kind s; 3 name s",
    "IngressServiceBackend": "1 name s; 2 port ServiceBackendPort",
    "ServiceBackendPort": "1 name s; 2 number i32",
    "IngressRule": "1 host s; 2 ingressRuleValue ^IngressRuleValue",
    "IngressRuleValue": "1 http HTTPIngressRuleValue",
    "HTTPIngressRuleValue": "1 paths HTTPIngressPath*",
    "HTTPIngressPath": "1 path s; 2 backend IngressBackend; 3 pathType s!",
    "IngressTLS": "1 hosts s*; 2 secretName s",
    "IngressStatus": "1 loadBalancer IngressLoadBalancerStatus",
    "IngressLoadBalancerStatus": "1 ingress IngressLoadBalancerIngress*",
    "IngressLoadBalancerIngress": "1 ip s; 2 hostname s; 4 ports PortStatus*",
    # ---- authentication.k8s.io/v1 TokenRequest (kubectl create token) ---------------------------
    "TokenRequest": "1 metadata ObjectMeta; 2 spec TokenRequestSpec; 3 status TokenRequestStatus",
    "TokenRequestSpec": "1 audiences s*; 4 expirationSeconds i64!; 3 boundObjectRef BoundObjectReference!",
    "BoundObjectReference": "1 kind s; 2 apiVersion s; 3 name s; 4 uid s",
    "TokenRequestStatus": "1 token s; 2 expirationTimestamp T",
    # ---- authorization.k8s.io/v1 and SelfSubjectReview (`kubectl auth can-i | whoami`) ----------
    # (SubjectAccessReviewSpec.extra, a map of ExtraValue messages, is not decoded)
    "SelfSubjectAccessReview": "1 metadata ObjectMeta; 2 spec SelfSubjectAccessReviewSpec",
    "SelfSubjectAccessReviewSpec": "1 resourceAttributes ResourceAttributes!; 2 nonResourceAttributes NonResourceAttributes!",
    "ResourceAttributes": "1 namespace s; 2 verb s; 3 group s; 4 version s; 5 resource s; 6 subresource s; 7 name s",
    "NonResourceAttributes": "1 path s; 2 verb s",
    "SubjectAccessReview": "1 metadata ObjectMeta; 2 spec SubjectAccessReviewSpec",
    "SubjectAccessReviewSpec": (
        "1 resourceAttributes ResourceAttributes!; 2 nonResourceAttributes NonResourceAttributes!; 3 user s; "
        "4 groups s*; 6 uid s"
    ),
    "SelfSubjectRulesReview": "1 metadata ObjectMeta; 2 spec SelfSubjectRulesReviewSpec",
    "SelfSubjectRulesReviewSpec": "1 namespace s",
    "SelfSubjectReview": "1 metadata ObjectMeta",
    # ---- autoscaling/v1 (`kubectl autoscale` sends v1 HPAs as protobuf) ------------------------
    "HPAv1": "1 metadata ObjectMeta; 2 spec HPAv1Spec; 3 status HPAv1Status",
    "HPAv1Spec": (
        "1 scaleTargetRef CrossVersionObjectReference; 2 minReplicas i32!; 3 maxReplicas i32!; "
        "4 targetCPUUtilizationPercentage i32!"
    ),
    "CrossVersionObjectReference": "1 kind s; 2 name s; 3 apiVersion s",
    # ---- autoscaling/v2 (what `kubectl autoscale` tries first) ------------------------------------
    "HPAv2": "1 metadata ObjectMeta; 2 spec HPAv2Spec; 3 status HPAv2Status",
    "HPAv2Spec": (
        "1 scaleTargetRef CrossVersionObjectReference; 2 minReplicas i32!; 3 maxReplicas i32!; "
        "4 metrics MetricSpec*; 5 behavior HPAv2Behavior"
    ),
    "MetricSpec": (
        "1 type s; 2 object ObjectMetricSource; 3 pods PodsMetricSource; 4 resource ResourceMetricSource; "
        "7 containerResource ContainerResourceMetricSource; 5 external ExternalMetricSource"
    ),
    "MetricTarget": "1 type s; 2 value Q; 3 averageValue Q; 4 averageUtilization i32!",
    "MetricIdentifier": "1 name s; 2 selector LabelSelector",
    "ObjectMetricSource": "1 describedObject CrossVersionObjectReference; 2 target MetricTarget; "
                          "3 metric MetricIdentifier",
    "PodsMetricSource": "1 metric MetricIdentifier; 2 target MetricTarget",
    "ResourceMetricSource": "1 name s; 2 target MetricTarget",
    "ContainerResourceMetricSource": "1 name s; 2 target MetricTarget; 3 container s",
    "ExternalMetricSource": "1 metric MetricIdentifier; 2 target MetricTarget",
    "HPAv2Behavior": "1 scaleUp HPAScalingRules; 2 scaleDown HPAScalingRules",
    "HPAScalingRules": (
        "3 stabilizationWindowSeconds i32!; 1 selectPolicy s!; 2 policies HPAScalingPolicy*; 4 tolerance Q"
    ),
    "HPAScalingPolicy": "1 type s; 2 value i32!; 3 periodSeconds i32!",
    "HPAv2Status": (
        "1 observedGeneration i64!; 2 lastScaleTime T; 3 currentReplicas i32!; 4 desiredReplicas i32!; "
        "5 currentMetrics MetricStatus*; 6 conditions HPAv2Condition*"
    ),
    "MetricStatus": (
        "1 type s; 2 object ObjectMetricStatus; 3 pods PodsMetricStatus; 4 resource ResourceMetricStatus; "
        "7 containerResource ContainerResourceMetricStatus; 5 external ExternalMetricStatus"
    ),
    "MetricValueStatus": "1 value Q; 2 averageValue Q; 3 averageUtilization i32!",
    "ObjectMetricStatus": "1 metric MetricIdentifier; 2 current MetricValueStatus; "
                          "3 describedObject CrossVersionObjectReference",
    "PodsMetricStatus": "1 metric MetricIdentifier; 2 current MetricValueStatus",
    "ResourceMetricStatus": "1 name s; 2 current MetricValueStatus",
    "ContainerResourceMetricStatus": "1 name s; 2 current MetricValueStatus; 3 container s",
    "ExternalMetricStatus": "1 metric MetricIdentifier; 2 current MetricValueStatus",
    "HPAv2Condition": (
        "1 type s; 2 status s; 3 lastTransitionTime T; 4 reason s; 5 message s; 6 observedGeneration i64"
    ),
    "HPAv1Status": (
        "1 observedGeneration i64!; 2 lastScaleTime T; 3 currentReplicas i32!; 4 desiredReplicas i32!; "
        "5 currentCPUUtilizationPercentage i32!"
    ),
}

# (apiVersion, kind) → top-level message; kind-only entries match any apiVersion.
KINDS: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): "Namespace",
    ("v1", "Pod"): "Pod",
    ("certificates.k8s.io/v1", "CertificateSigningRequest"): "CertificateSigningRequest",
    ("v1", "ConfigMap"): "ConfigMap",
    ("v1", "Secret"): "Secret",
    ("v1", "ServiceAccount"): "ServiceAccount",
    ("v1", "Service"): "Service",
    ("v1", "ResourceQuota"): "ResourceQuota",
    ("v1", "Binding"): "Binding",
    ("apps/v1", "Deployment"): "Deployment",
    ("apps/v1", "ReplicaSet"): "ReplicaSet",
    ("batch/v1", "Job"): "Job",
    ("batch/v1", "CronJob"): "CronJob",
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
    ("policy/v1", "Eviction"): "Eviction",
    ("", "DeleteOptions"): "DeleteOptions",
    ("rbac.authorization.k8s.io/v1", "Role"): "Role",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "ClusterRole",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "RoleBinding",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "RoleBinding",
    ("networking.k8s.io/v1", "Ingress"): "Ingress",
    ("authentication.k8s.io/v1", "TokenRequest"): "TokenRequest",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "SelfSubjectAccessReview",
    ("authorization.k8s.io/v1", "SubjectAccessReview"): "SubjectAccessReview",
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview"): "SubjectAccessReview",
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): "SelfSubjectRulesReview",
    ("autoscaling/v1", "HorizontalPodAutoscaler"): "HPAv1",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "HPAv2",
}

SCALARS = frozenset({"s", "b", "bool", "i32", "i64", "T", "MT", "Q", "IOS", "raw", "f1"})


@dataclass(slots=True, frozen=True)
class FieldSpec:
    number: int
    json_name: str
    type: str  # scalar code, "map:<v>", a message name
    repeated: bool = False
    keep_zero: bool = False
    inline: bool = False  # embedded Go struct: merge the nested message's JSON into the parent

    @property
    def is_message(self) -> bool:
        return self.type not in SCALARS and not self.type.startswith("map:")


def _parse(spec: str) -> dict[int, FieldSpec]:
    out: dict[int, FieldSpec] = {}
    for entry in spec.split(";"):
        parts = entry.split()
        if not parts:
            continue
        number, name, type_ = int(parts[0]), parts[1], parts[2]
        repeated = "*" in type_
        keep = "!" in type_
        inline = type_.startswith("^")
        type_ = type_.strip("*!^")
        out[number] = FieldSpec(number, name, type_, repeated, keep, inline)
    return out


@cache
def message_tables() -> dict[str, dict[int, FieldSpec]]:
    """message name → {field number → FieldSpec} (parsed once, read-only afterwards)."""
    tables = {name: _parse(spec) for name, spec in _SPECS.items()}
    for name, fields in tables.items():
        for f in fields.values():
            if f.is_message and f.type not in tables:
                raise RuntimeError(f"protobuf schema: {name}.{f.json_name} refers to unknown message {f.type}")
            if f.type.startswith("map:") and f.type[4:] not in ("s", "b", "Q", "T"):
                raise RuntimeError(f"protobuf schema: {name}.{f.json_name} has unsupported map type {f.type}")
    return tables


def message_for(api_version: str, kind: str) -> str | None:
    return KINDS.get((api_version, kind)) or KINDS.get(("", kind))
