"""Pure helpers two or more components need (layer L2): pod resource requests, taints and
tolerations, node affinity, label selectors on objects. Written once, used by the scheduler,
the descheduler, the controllers and the simulated kubelets."""
