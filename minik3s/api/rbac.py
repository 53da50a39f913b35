"""rbac.authorization.k8s.io/v1 wire types: Role, ClusterRole, RoleBinding, ClusterRoleBinding
(layer L2, upstream k8s.io/api/rbac/v1).

They are stored, validated and listed as upstream does, and the RBAC authorizer
(apiserver.rbac) decides requests from them; the bootstrap policy below is what
kube-apiserver reconciles at start (plugin/pkg/auth/authorizer/rbac/bootstrappolicy).
"""

from __future__ import annotations

from minik3s.api.meta import K8sModel, LabelSelector, TypedObject


class PolicyRule(K8sModel):
    verbs: list[str] | None = None
    apiGroups: list[str] | None = None
    resources: list[str] | None = None
    resourceNames: list[str] | None = None
    nonResourceURLs: list[str] | None = None


class AggregationRule(K8sModel):
    clusterRoleSelectors: list[LabelSelector] | None = None


class Role(TypedObject):
    rules: list[PolicyRule] | None = None


class ClusterRole(TypedObject):
    rules: list[PolicyRule] | None = None
    aggregationRule: AggregationRule | None = None


class Subject(K8sModel):
    kind: str = ""
    apiGroup: str | None = None
    name: str = ""
    namespace: str | None = None


class RoleRef(K8sModel):
    apiGroup: str = ""
    kind: str = ""
    name: str = ""


class RoleBinding(TypedObject):
    subjects: list[Subject] | None = None
    roleRef: RoleRef | None = None


class ClusterRoleBinding(TypedObject):
    subjects: list[Subject] | None = None
    roleRef: RoleRef | None = None


# ---- bootstrap policy (upstream plugin/pkg/auth/authorizer/rbac/bootstrappolicy) -------------

BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"

_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
_VIEW_CORE = ["configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
              "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
              "services/status", "bindings", "events", "limitranges", "namespaces/status", "pods/log",
              "pods/status", "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"]
_VIEW_APPS = ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
              "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets",
              "statefulsets/scale", "statefulsets/status"]


def policy_rule(verbs: list[str], groups: list[str], resources: list[str]) -> dict[str, list[str]]:
    """One PolicyRule as bootstrappolicy's rule builder makes it: each list a sorted set."""
    return {"apiGroups": sorted(set(groups)), "resources": sorted(set(resources)), "verbs": sorted(set(verbs))}


def named_rule(verbs: list[str], groups: list[str], resources: list[str], names: list[str]) -> dict[str, list[str]]:
    return {**policy_rule(verbs, groups, resources), "resourceNames": sorted(set(names))}


def cluster_role(name: str, rules: list[dict[str, list[str]]], *, labels: dict[str, str] | None = None,
                  aggregate_from: str | None = None) -> dict[str, object]:
    role: dict[str, object] = {
        "apiVersion": RBAC_API_VERSION, "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {**BOOTSTRAP_LABELS, **(labels or {})}, "annotations": dict(AUTOUPDATE)},
        "rules": rules,
    }
    if aggregate_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {aggregate_from: "true"}}]}
    return role


def bootstrap_cluster_roles() -> list[dict[str, object]]:
    """The default ClusterRoles kube-apiserver reconciles at start: the user-facing roles
    (cluster-admin, admin, edit, view and their aggregate-to-* parts) and the system:* roles
    clients look for (discovery, basic-user, public-info-viewer, node, ...)."""
    view = [
        policy_rule(_READ, [""], _VIEW_CORE + ["namespaces"]),
        policy_rule(_READ, ["apps"], _VIEW_APPS),
        policy_rule(_READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
        policy_rule(_READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
        policy_rule(_READ, ["discovery.k8s.io"], ["endpointslices"]),
        policy_rule(_READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
        policy_rule(_READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
    ]
    edit = [
        policy_rule(["create", "delete", "deletecollection", "patch", "update"], [""],
              ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
        policy_rule(["create"], [""], ["pods/eviction"]),
        policy_rule(_WRITE, [""], ["configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
                             "replicationcontrollers/scale", "secrets", "serviceaccounts", "services",
                             "services/proxy"]),
        policy_rule(["create"], [""], ["serviceaccounts/token"]),
        policy_rule(_WRITE, ["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale",
                                 "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"]),
        policy_rule(_WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
        policy_rule(_WRITE, ["batch"], ["cronjobs", "jobs"]),
        policy_rule(_WRITE, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
        policy_rule(_WRITE, ["policy"], ["poddisruptionbudgets"]),
        policy_rule(_WRITE, ["discovery.k8s.io"], ["endpointslices"]),
        policy_rule(_READ, [""], ["secrets"]),
    ]
    admin = [
        policy_rule(_READ + _WRITE, ["rbac.authorization.k8s.io"], ["rolebindings", "roles"]),
        policy_rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
    ]
    agg = "rbac.authorization.k8s.io/aggregate-to-"
    return [
        cluster_role("cluster-admin", [policy_rule(["*"], ["*"], ["*"]), {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        cluster_role("admin", [], aggregate_from=f"{agg}admin"),
        cluster_role("edit", [], labels={f"{agg}admin": "true"}, aggregate_from=f"{agg}edit"),
        cluster_role("view", [], labels={f"{agg}edit": "true"}, aggregate_from=f"{agg}view"),
        cluster_role("system:aggregate-to-admin", admin, labels={f"{agg}admin": "true"}),
        cluster_role("system:aggregate-to-edit", edit, labels={f"{agg}edit": "true"}),
        cluster_role("system:aggregate-to-view", view, labels={f"{agg}view": "true"}),
        cluster_role("system:discovery", [{"nonResourceURLs": [
            "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
            "/version", "/version/"], "verbs": ["get"]}]),
        cluster_role("system:basic-user", [
            policy_rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
            policy_rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"])]),
        cluster_role("system:public-info-viewer", [{"nonResourceURLs": [
            "/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]}]),
        cluster_role("system:monitoring", [{"nonResourceURLs": [
            "/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz", "/readyz/*"],
            "verbs": ["get"]}]),
        cluster_role("system:node", [
            policy_rule(["create", "get", "list", "watch", "update", "patch", "delete"], [""], ["nodes", "nodes/status"]),
            policy_rule(["get", "list", "watch"], [""], ["pods", "services", "endpoints", "configmaps", "secrets"]),
            policy_rule(["create", "delete"], [""], ["pods"]),
            policy_rule(["update", "patch"], [""], ["pods/status"]),
            policy_rule(["create", "patch", "update"], ["", "events.k8s.io"], ["events"]),
            policy_rule(["create", "delete", "get", "patch", "update"], ["coordination.k8s.io"], ["leases"])]),
        cluster_role("system:kube-scheduler", [
            policy_rule(["create", "patch", "update"], ["", "events.k8s.io"], ["events"]),
            policy_rule(["create"], ["coordination.k8s.io"], ["leases"]),
            named_rule(["get", "update"], ["coordination.k8s.io"], ["leases"], ["kube-scheduler"]),
            policy_rule(["create"], [""], ["endpoints"]),
            named_rule(["get", "update"], [""], ["endpoints"], ["kube-scheduler"]),
            policy_rule(_READ, [""], ["nodes"]),
            policy_rule(["get", "list", "watch", "delete"], [""], ["pods"]),
            policy_rule(["create"], [""], ["pods/binding", "bindings"]),
            policy_rule(["patch", "update"], [""], ["pods/status"]),
            policy_rule(_READ, [""], ["services", "replicationcontrollers"]),
            policy_rule(_READ, ["apps", "extensions"], ["replicasets"]),
            policy_rule(_READ, ["apps"], ["statefulsets"]),
            policy_rule(_READ, ["policy"], ["poddisruptionbudgets"]),
            policy_rule(_READ, [""], ["persistentvolumeclaims", "persistentvolumes"]),
            policy_rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
            policy_rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
            policy_rule(_READ, ["storage.k8s.io"], ["csinodes"]),
            policy_rule(_READ, ["storage.k8s.io"], ["csidrivers"]),
            policy_rule(_READ, ["storage.k8s.io"], ["csistoragecapacities"])]),
        cluster_role("system:volume-scheduler", [
            policy_rule(_READ + ["update"], [""], ["persistentvolumes"]),
            policy_rule(_READ, ["storage.k8s.io"], ["storageclasses"]),
            policy_rule(_READ + ["update"], [""], ["persistentvolumeclaims"])]),
        # kube-controller-manager's own identity: shared informers everywhere plus what it needs
        # to mint per-controller service accounts (the controllers then act as those upstream)
        cluster_role("system:kube-controller-manager", [
            policy_rule(["create", "patch", "update"], ["", "events.k8s.io"], ["events"]),
            policy_rule(["create"], ["coordination.k8s.io"], ["leases"]),
            named_rule(["get", "update"], ["coordination.k8s.io"], ["leases"], ["kube-controller-manager"]),
            policy_rule(["create"], [""], ["endpoints"]),
            named_rule(["get", "update"], [""], ["endpoints"], ["kube-controller-manager"]),
            policy_rule(["create"], [""], ["secrets", "serviceaccounts"]),
            policy_rule(["delete"], [""], ["secrets"]),
            policy_rule(["get"], [""], ["namespaces", "secrets", "serviceaccounts", "configmaps"]),
            policy_rule(["update"], [""], ["secrets", "serviceaccounts"]),
            policy_rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
            policy_rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
            policy_rule(["list", "watch"], ["*"], ["*"]),
            policy_rule(["create"], [""], ["serviceaccounts/token"])]),
        *_component_roles(),
    ]


def events_rule() -> dict[str, list[str]]:
    """bootstrappolicy's eventsRule: write Events in both groups."""
    return policy_rule(["create", "update", "patch"], ["", "events.k8s.io"], ["events"])


def _component_roles() -> list[dict[str, object]]:
    """The rest of bootstrappolicy.ClusterRoles() that operators and add-ons bind to by name
    (`system:auth-delegator` for delegated authentication, the CSR approver roles, kube-proxy's,
    kube-dns', a provisioner's, ...), with upstream's rules."""
    signer_approvers = [("legacy-unknown-approver", "kubernetes.io/legacy-unknown"),
                        ("kubelet-serving-approver", "kubernetes.io/kubelet-serving"),
                        ("kube-apiserver-client-approver", "kubernetes.io/kube-apiserver-client"),
                        ("kube-apiserver-client-kubelet-approver", "kubernetes.io/kube-apiserver-client-kubelet")]
    return [
        cluster_role("system:heapster", [policy_rule(_READ, [""], ["events", "pods", "nodes", "namespaces"]),
                                          policy_rule(_READ, ["extensions"], ["deployments"])]),
        cluster_role("system:node-problem-detector", [policy_rule(["get"], [""], ["nodes"]),
                                                       policy_rule(["patch"], [""], ["nodes/status"]), events_rule()]),
        cluster_role("system:kubelet-api-admin", [
            policy_rule(["get", "list", "watch"], [""], ["nodes"]), policy_rule(["proxy"], [""], ["nodes"]),
            policy_rule(["*"], [""], ["nodes/proxy", "nodes/metrics", "nodes/spec", "nodes/stats", "nodes/log"])]),
        cluster_role("system:node-bootstrapper", [
            policy_rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"])]),
        cluster_role("system:auth-delegator", [policy_rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
                                                policy_rule(["create"], ["authorization.k8s.io"],
                                                      ["subjectaccessreviews"])]),
        cluster_role("system:kube-aggregator", [policy_rule(_READ, [""], ["services", "endpoints"])]),
        cluster_role("system:kube-dns", [policy_rule(["list", "watch"], [""], ["endpoints", "services"])]),
        cluster_role("system:persistent-volume-provisioner", [
            policy_rule(["get", "list", "watch", "create", "delete"], [""], ["persistentvolumes"]),
            policy_rule(["get", "list", "watch", "update"], [""], ["persistentvolumeclaims"]),
            policy_rule(_READ, ["storage.k8s.io"], ["storageclasses"]),
            policy_rule(["watch"], [""], ["events"]), events_rule()]),
        cluster_role("system:certificates.k8s.io:certificatesigningrequests:nodeclient", [
            policy_rule(["create"], ["certificates.k8s.io"], ["certificatesigningrequests/nodeclient"])]),
        cluster_role("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", [
            policy_rule(["create"], ["certificates.k8s.io"], ["certificatesigningrequests/selfnodeclient"])]),
        *(cluster_role(f"system:certificates.k8s.io:{name}",
                        [named_rule(["approve"], ["certificates.k8s.io"], ["signers"], [signer])])
          for name, signer in signer_approvers),
        cluster_role("system:service-account-issuer-discovery", [
            {"nonResourceURLs": ["/.well-known/openid-configuration", "/.well-known/openid-configuration/",
                                 "/openid/v1/jwks", "/openid/v1/jwks/"], "verbs": ["get"]}]),
        cluster_role("system:node-proxier", [
            policy_rule(["list", "watch"], [""], ["services", "endpoints"]),
            policy_rule(["get", "list", "watch"], [""], ["nodes"]), events_rule(),
            policy_rule(["list", "watch"], ["discovery.k8s.io"], ["endpointslices"])]),
    ]


def bootstrap_cluster_role_bindings() -> list[dict[str, object]]:
    """Upstream's default bindings: cluster-admin to system:masters, discovery and basic-user
    to system:authenticated, public-info-viewer to everyone, the scheduler's and the
    controller manager's roles to their users, system:node without subjects."""
    def crb(name: str, role: str, groups: list[str]) -> dict[str, object]:
        return {"apiVersion": RBAC_API_VERSION, "kind": "ClusterRoleBinding",
                "metadata": {"name": name, "labels": dict(BOOTSTRAP_LABELS), "annotations": dict(AUTOUPDATE)},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g} for g in groups]}
    return [
        crb("cluster-admin", "cluster-admin", ["system:masters"]),
        crb("system:monitoring", "system:monitoring", ["system:monitoring"]),
        crb("system:discovery", "system:discovery", ["system:authenticated"]),
        crb("system:basic-user", "system:basic-user", ["system:authenticated"]),
        crb("system:public-info-viewer", "system:public-info-viewer",
            ["system:authenticated", "system:unauthenticated"]),
        crb("system:kube-scheduler", "system:kube-scheduler", []) | {"subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-scheduler"}]},
        crb("system:kube-controller-manager", "system:kube-controller-manager", []) | {"subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-controller-manager"}]},
        crb("system:volume-scheduler", "system:volume-scheduler", []) | {"subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-scheduler"}]},
        crb("system:service-account-issuer-discovery", "system:service-account-issuer-discovery",
            ["system:serviceaccounts"]),
        crb("system:node-proxier", "system:node-proxier", []) | {"subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-proxy"}]},
        crb("system:kube-dns", "system:kube-dns", []) | {"subjects": [
            {"kind": "ServiceAccount", "name": "kube-dns", "namespace": "kube-system"}]},
        # kept without subjects since v1.8: nodes are authorized by the Node authorizer upstream
        {k: v for k, v in crb("system:node", "system:node", []).items() if k != "subjects"},
    ]
