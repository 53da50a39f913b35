"""The controllers' and the system namespaces' bootstrap RBAC policy (layer L2): what
kube-apiserver v1.33's `rbac/bootstrap-roles` post-start hook creates beside the ClusterRoles of
minik3s.api.rbac (upstream plugin/pkg/auth/authorizer/rbac/bootstrappolicy, controller_policy.go
and namespace_policy.go).

Why: every cluster has them. `kubectl get clusterroles` lists one `system:controller:NAME` role
per kube-controller-manager controller, each bound to the ServiceAccount `kube-system/NAME` the
controller acts as under `--use-service-account-credentials` (K3s runs its controller manager so);
operators and charts bind to some of them by name (`extension-apiserver-authentication-reader`
for aggregated API servers, the leader-locking Roles), and `kubectl auth can-i --as
system:serviceaccount:kube-system:deployment-controller ...` answers from them.

Which roles: upstream's list with v1.33's default feature gates (DynamicResourceAllocation,
VolumeAttributesClass, ClusterTrustBundle, StorageVersionAPI and StorageVersionMigrator off, so
their controllers' roles are absent; MultiCIDRServiceAllocator GA and SELinuxChangePolicy beta
on, so `service-cidrs-controller` and `selinux-warning-controller` are present). Each rule's lists
are sorted sets, the rules keep upstream's order, and every object carries the bootstrapping
label and the autoupdate annotation.

Example: `system:controller:deployment-controller` allows the ServiceAccount
`kube-system:deployment-controller` to `update` `deployments/status` and to `create`
`replicasets`, and nothing on Secrets.
"""

from __future__ import annotations

from minik3s.api.rbac import (
    AUTOUPDATE,
    BOOTSTRAP_LABELS,
    RBAC_API_VERSION,
    cluster_role,
    events_rule,
    named_rule,
    policy_rule,
)

_RW = ["create", "delete", "get", "list", "patch", "update", "watch"]
_GLW = ["get", "list", "watch"]
_LW = ["list", "watch"]
_CONTROLLER_PREFIX = "system:controller:"
_ROLE_REF_GROUP = "rbac.authorization.k8s.io"


def _controller_rules() -> list[tuple[str, list[dict[str, list[str]]]]]:
    """(controller name, rules) in kube-apiserver's creation order."""
    apps_ext = ["apps", "extensions"]
    return [
        ("attachdetach-controller", [
            policy_rule(_LW, [""], ["persistentvolumes", "persistentvolumeclaims"]),
            policy_rule(_GLW, [""], ["nodes"]),
            policy_rule(["patch", "update"], [""], ["nodes/status"]),
            policy_rule(_LW, [""], ["pods"]),
            events_rule(),
            policy_rule(["get", "create", "delete", "list", "watch"], ["storage.k8s.io"], ["volumeattachments"]),
            policy_rule(_GLW, ["storage.k8s.io"], ["csidrivers"]),
            policy_rule(_GLW, ["storage.k8s.io"], ["csinodes"])]),
        ("clusterrole-aggregation-controller", [
            policy_rule(["escalate", "get", "list", "watch", "update", "patch"], ["rbac.authorization.k8s.io"],
                  ["clusterroles"])]),
        ("cronjob-controller", [
            policy_rule(["get", "list", "watch", "update"], ["batch"], ["cronjobs"]),
            policy_rule(_RW, ["batch"], ["jobs"]),
            policy_rule(["update"], ["batch"], ["cronjobs/status"]),
            policy_rule(["update"], ["batch"], ["cronjobs/finalizers"]),
            policy_rule(["list", "watch", "delete"], [""], ["pods"]),
            events_rule()]),
        ("daemon-set-controller", [
            policy_rule(_GLW, apps_ext, ["daemonsets"]),
            policy_rule(["update"], apps_ext, ["daemonsets/status"]),
            policy_rule(["update"], apps_ext, ["daemonsets/finalizers"]),
            policy_rule(_LW, [""], ["nodes"]),
            policy_rule(["list", "watch", "create", "delete", "patch"], [""], ["pods"]),
            policy_rule(["create"], [""], ["pods/binding"]),
            policy_rule(_RW, ["apps"], ["controllerrevisions"]),
            events_rule()]),
        ("deployment-controller", [
            policy_rule(["get", "list", "watch", "update"], apps_ext, ["deployments"]),
            policy_rule(["update"], apps_ext, ["deployments/status"]),
            policy_rule(["update"], apps_ext, ["deployments/finalizers"]),
            policy_rule(_RW, apps_ext, ["replicasets"]),
            policy_rule(["get", "list", "watch", "update"], [""], ["pods"]),
            events_rule()]),
        ("disruption-controller", [
            policy_rule(_GLW, apps_ext, ["deployments"]),
            policy_rule(_GLW, apps_ext, ["replicasets"]),
            policy_rule(_GLW, [""], ["replicationcontrollers"]),
            policy_rule(_GLW, ["policy"], ["poddisruptionbudgets"]),
            policy_rule(_GLW, ["apps"], ["statefulsets"]),
            policy_rule(["update"], ["policy"], ["poddisruptionbudgets/status"]),
            policy_rule(["patch", "update"], [""], ["pods/status"]),
            policy_rule(["get"], ["*"], ["*/scale"]),
            events_rule()]),
        ("endpoint-controller", [
            policy_rule(_GLW, [""], ["services", "pods"]),
            policy_rule(["get", "list", "create", "update", "delete", "watch"], [""], ["endpoints"]),
            policy_rule(["create"], [""], ["endpoints/restricted"]),
            events_rule()]),
        ("endpointslice-controller", [
            policy_rule(_GLW, [""], ["services", "pods", "nodes"]),
            policy_rule(["update"], [""], ["services/finalizers"]),
            policy_rule(["get", "list", "create", "update", "delete", "watch"], ["discovery.k8s.io"], ["endpointslices"]),
            events_rule()]),
        ("endpointslicemirroring-controller", [
            policy_rule(_GLW, [""], ["services", "endpoints"]),
            policy_rule(["update"], [""], ["services/finalizers"]),
            policy_rule(["update"], [""], ["endpoints/finalizers"]),
            policy_rule(["get", "list", "create", "update", "delete", "watch"], ["discovery.k8s.io"], ["endpointslices"]),
            events_rule()]),
        ("expand-controller", [
            policy_rule(["get", "list", "watch", "update", "patch"], [""], ["persistentvolumes"]),
            policy_rule(["update", "patch"], [""], ["persistentvolumeclaims/status"]),
            policy_rule(_GLW, [""], ["persistentvolumeclaims"]),
            events_rule(),
            policy_rule(["get"], [""], ["services"])]),
        ("ephemeral-volume-controller", [
            policy_rule(_GLW, [""], ["pods"]),
            policy_rule(["update"], [""], ["pods/finalizers"]),
            policy_rule(["get", "list", "watch", "create"], [""], ["persistentvolumeclaims"]),
            events_rule()]),
        ("generic-garbage-collector", [
            policy_rule(["get", "list", "watch", "patch", "update", "delete"], ["*"], ["*"]),
            events_rule()]),
        ("horizontal-pod-autoscaler", [
            policy_rule(_GLW, ["autoscaling"], ["horizontalpodautoscalers"]),
            policy_rule(["update"], ["autoscaling"], ["horizontalpodautoscalers/status"]),
            policy_rule(["get", "update"], ["*"], ["*/scale"]),
            policy_rule(_LW, [""], ["pods"]),
            policy_rule(_LW, ["metrics.k8s.io"], ["pods"]),
            policy_rule(_GLW, ["custom.metrics.k8s.io"], ["*"]),
            policy_rule(_GLW, ["external.metrics.k8s.io"], ["*"]),
            events_rule()]),
        ("job-controller", [
            policy_rule(["get", "list", "watch", "update", "patch"], ["batch"], ["jobs"]),
            policy_rule(["update"], ["batch"], ["jobs/status"]),
            policy_rule(["update"], ["batch"], ["jobs/finalizers"]),
            policy_rule(["list", "watch", "create", "delete", "patch"], [""], ["pods"]),
            events_rule()]),
        ("namespace-controller", [
            policy_rule(["get", "list", "watch", "delete"], [""], ["namespaces"]),
            policy_rule(["update"], [""], ["namespaces/finalize", "namespaces/status"]),
            policy_rule(["get", "list", "delete", "deletecollection", "watch"], ["*"], ["*"])]),
        ("node-controller", [
            policy_rule(["get", "list", "update", "delete", "patch", "watch"], [""], ["nodes"]),
            policy_rule(["patch", "update"], [""], ["nodes/status"]),
            policy_rule(["patch", "update"], [""], ["pods/status"]),
            policy_rule(["list", "watch", "delete", "get"], [""], ["pods"]),
            events_rule()]),
        ("persistent-volume-binder", [
            policy_rule(["get", "list", "watch", "update", "create", "delete"], [""], ["persistentvolumes"]),
            policy_rule(["update"], [""], ["persistentvolumes/status"]),
            policy_rule(["get", "list", "watch", "update"], [""], ["persistentvolumeclaims"]),
            policy_rule(["update"], [""], ["persistentvolumeclaims/status"]),
            policy_rule(["list", "watch", "get", "create", "delete"], [""], ["pods"]),
            policy_rule(_GLW, ["storage.k8s.io"], ["storageclasses"]),
            policy_rule(_LW, [""], ["nodes"]),
            events_rule(),
            policy_rule(["watch"], [""], ["events"]),
            policy_rule(["get"], [""], ["services"])]),
        ("pod-garbage-collector", [
            policy_rule(["list", "watch", "delete"], [""], ["pods"]),
            policy_rule(_GLW, [""], ["nodes"]),
            policy_rule(["patch"], [""], ["pods/status"])]),
        ("replicaset-controller", [
            policy_rule(["get", "list", "watch", "update"], apps_ext, ["replicasets"]),
            policy_rule(["update"], apps_ext, ["replicasets/status"]),
            policy_rule(["update"], apps_ext, ["replicasets/finalizers"]),
            policy_rule(["list", "watch", "patch", "create", "delete"], [""], ["pods"]),
            events_rule()]),
        ("replication-controller", [
            policy_rule(["get", "list", "watch", "update"], [""], ["replicationcontrollers"]),
            policy_rule(["update"], [""], ["replicationcontrollers/status"]),
            policy_rule(["update"], [""], ["replicationcontrollers/finalizers"]),
            policy_rule(["list", "watch", "patch", "create", "delete"], [""], ["pods"]),
            events_rule()]),
        ("resourcequota-controller", [
            policy_rule(_LW, ["*"], ["*"]),
            policy_rule(["update"], [""], ["resourcequotas/status"]),
            events_rule()]),
        ("route-controller", [
            policy_rule(_LW, [""], ["nodes"]),
            policy_rule(["patch"], [""], ["nodes/status"]),
            events_rule()]),
        ("service-account-controller", [
            policy_rule(["create"], [""], ["serviceaccounts"]),
            events_rule()]),
        ("service-controller", [
            policy_rule(_GLW, [""], ["services"]),
            policy_rule(["patch", "update"], [""], ["services/status"]),
            policy_rule(_LW, [""], ["nodes"]),
            events_rule()]),
        ("service-cidrs-controller", [
            policy_rule(["get", "list", "watch", "patch", "update"], ["networking.k8s.io"], ["servicecidrs"]),
            policy_rule(["patch", "update"], ["networking.k8s.io"], ["servicecidrs/finalizers"]),
            policy_rule(["patch", "update"], ["networking.k8s.io"], ["servicecidrs/status"]),
            policy_rule(_GLW, ["networking.k8s.io"], ["ipaddresses"]),
            events_rule()]),
        ("statefulset-controller", [
            policy_rule(_LW, [""], ["pods"]),
            policy_rule(_GLW, ["apps"], ["statefulsets"]),
            policy_rule(["update"], ["apps"], ["statefulsets/status"]),
            policy_rule(["update"], ["apps"], ["statefulsets/finalizers"]),
            policy_rule(["get", "create", "delete", "update", "patch"], [""], ["pods"]),
            policy_rule(_RW, ["apps"], ["controllerrevisions"]),
            policy_rule(["get", "create", "list", "watch"], [""], ["persistentvolumeclaims"]),
            policy_rule(["update", "delete"], [""], ["persistentvolumeclaims"]),
            policy_rule(["update"], [""], ["pods/finalizers"]),
            events_rule()]),
        ("ttl-controller", [
            policy_rule(["update", "patch", "list", "watch"], [""], ["nodes"]),
            events_rule()]),
        ("certificate-controller", [
            policy_rule(["get", "list", "watch", "delete"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
            policy_rule(["update"], ["certificates.k8s.io"],
                  ["certificatesigningrequests/status", "certificatesigningrequests/approval"]),
            named_rule(["approve"], ["certificates.k8s.io"], ["signers"], ["kubernetes.io/kube-apiserver-client-kubelet"]),
            named_rule(["sign"], ["certificates.k8s.io"], ["signers"], [
                "kubernetes.io/legacy-unknown", "kubernetes.io/kube-apiserver-client",
                "kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving"]),
            policy_rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
            events_rule()]),
        ("pvc-protection-controller", [
            policy_rule(["get", "list", "watch", "update"], [""], ["persistentvolumeclaims"]),
            policy_rule(_GLW, [""], ["pods"]),
            events_rule()]),
        ("pv-protection-controller", [
            policy_rule(["get", "list", "watch", "update"], [""], ["persistentvolumes"]),
            events_rule()]),
        ("ttl-after-finished-controller", [
            policy_rule(["get", "list", "watch", "delete"], ["batch"], ["jobs"]),
            events_rule()]),
        ("root-ca-cert-publisher", [
            policy_rule(["create", "update"], [""], ["configmaps"]),
            events_rule()]),
        ("validatingadmissionpolicy-status-controller", [
            policy_rule(_GLW, ["admissionregistration.k8s.io"], ["validatingadmissionpolicies"]),
            policy_rule(["get", "patch", "update"], ["admissionregistration.k8s.io"],
                  ["validatingadmissionpolicies/status"]),
            events_rule()]),
        ("legacy-service-account-token-cleaner", [
            named_rule(["get"], [""], ["configmaps"], ["kube-apiserver-legacy-service-account-token-tracking"]),
            policy_rule(["delete", "patch"], [""], ["secrets"])]),
        ("selinux-warning-controller", [
            events_rule(),
            policy_rule(_GLW, [""], ["persistentvolumes"]),
            policy_rule(_GLW, [""], ["persistentvolumeclaims"]),
            policy_rule(_GLW, [""], ["pods"]),
            policy_rule(_GLW, ["storage.k8s.io"], ["csidrivers"])]),
    ]


CONTROLLER_NAMES = tuple(name for name, _ in _controller_rules())
# the ServiceAccounts kube-controller-manager gets or creates in kube-system as it starts its
# controllers with --use-service-account-credentials (K3s runs it so, with `--controllers
# *,tokencleaner` and an external cloud provider): one per controller it runs by default, without
# the cloud's service and route controllers and the selinux-warning controller (off by default),
# with the token cleaner K3s turns on
CONTROLLER_SERVICE_ACCOUNTS = tuple(
    sorted({*CONTROLLER_NAMES, "token-cleaner"} - {"route-controller", "service-controller", "selinux-warning-controller"}))


def controller_cluster_roles() -> list[dict[str, object]]:
    """`system:controller:NAME` for each kube-controller-manager controller (creation order)."""
    return [cluster_role(_CONTROLLER_PREFIX + name, rules) for name, rules in _controller_rules()]


def _meta(name: str, namespace: str | None = None) -> dict[str, object]:
    meta: dict[str, object] = {"name": name, "labels": dict(BOOTSTRAP_LABELS), "annotations": dict(AUTOUPDATE)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def _sa(name: str, namespace: str = "kube-system") -> dict[str, str]:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def _user(name: str) -> dict[str, str]:
    return {"apiGroup": _ROLE_REF_GROUP, "kind": "User", "name": name}


def controller_cluster_role_bindings() -> list[dict[str, object]]:
    """Each controller role bound to its controller's ServiceAccount in kube-system."""
    return [{"apiVersion": RBAC_API_VERSION, "kind": "ClusterRoleBinding",
             "metadata": _meta(_CONTROLLER_PREFIX + name),
             "roleRef": {"apiGroup": _ROLE_REF_GROUP, "kind": "ClusterRole", "name": _CONTROLLER_PREFIX + name},
             "subjects": [_sa(name)]} for name in CONTROLLER_NAMES]


def namespace_roles() -> list[dict[str, object]]:
    """The Roles kube-apiserver creates in kube-system and kube-public."""
    leases = ["create", "get", "list", "update", "watch"]

    def role(namespace: str, name: str, rules: list[dict[str, list[str]]]) -> dict[str, object]:
        return {"apiVersion": RBAC_API_VERSION, "kind": "Role", "metadata": _meta(name, namespace), "rules": rules}
    return [
        role("kube-system", "extension-apiserver-authentication-reader", [
            named_rule(_GLW, [""], ["configmaps"], ["extension-apiserver-authentication"])]),
        role("kube-system", "system::leader-locking-kube-controller-manager", [
            policy_rule(leases, ["coordination.k8s.io"], ["leases"]),
            policy_rule(leases, ["coordination.k8s.io"], ["leasecandidates"])]),
        role("kube-system", "system::leader-locking-kube-scheduler", [
            policy_rule(leases, ["coordination.k8s.io"], ["leases"]),
            policy_rule(leases, ["coordination.k8s.io"], ["leasecandidates"])]),
        role("kube-system", "system:controller:bootstrap-signer", [policy_rule(_GLW, [""], ["secrets"])]),
        role("kube-system", "system:controller:cloud-provider", [
            policy_rule(["create", "get", "list", "watch"], [""], ["configmaps"])]),
        role("kube-system", "system:controller:token-cleaner", [
            policy_rule(["delete", "get", "list", "watch"], [""], ["secrets"]), events_rule()]),
        role("kube-public", "system:controller:bootstrap-signer", [
            policy_rule(_GLW, [""], ["configmaps"]),
            named_rule(["update"], [""], ["configmaps"], ["cluster-info"]),
            events_rule()]),
    ]


def namespace_role_bindings() -> list[dict[str, object]]:
    """The RoleBindings kube-apiserver creates in kube-system and kube-public."""
    def binding(namespace: str, name: str, role: str, subjects: list[dict[str, str]]) -> dict[str, object]:
        return {"apiVersion": RBAC_API_VERSION, "kind": "RoleBinding", "metadata": _meta(name, namespace),
                "roleRef": {"apiGroup": _ROLE_REF_GROUP, "kind": "Role", "name": role}, "subjects": subjects}
    return [
        binding("kube-system", "system::extension-apiserver-authentication-reader",
                "extension-apiserver-authentication-reader",
                [_user("system:kube-controller-manager"), _user("system:kube-scheduler")]),
        binding("kube-system", "system::leader-locking-kube-controller-manager",
                "system::leader-locking-kube-controller-manager",
                [_user("system:kube-controller-manager"), _sa("kube-controller-manager"),
                 _sa("leader-election-controller")]),
        binding("kube-system", "system::leader-locking-kube-scheduler", "system::leader-locking-kube-scheduler",
                [_user("system:kube-scheduler"), _sa("kube-scheduler")]),
        binding("kube-system", "system:controller:bootstrap-signer", "system:controller:bootstrap-signer",
                [_sa("bootstrap-signer")]),
        binding("kube-system", "system:controller:cloud-provider", "system:controller:cloud-provider",
                [_sa("cloud-provider")]),
        binding("kube-system", "system:controller:token-cleaner", "system:controller:token-cleaner",
                [_sa("token-cleaner")]),
        binding("kube-public", "system:controller:bootstrap-signer", "system:controller:bootstrap-signer",
                [_sa("bootstrap-signer")]),
    ]
