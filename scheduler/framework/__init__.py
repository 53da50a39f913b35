"""The scheduling framework: extension-point contracts, CycleState, NodeInfo/PodInfo, runtime."""
