"""NodeResourcesFit and NodeResourcesBalancedAllocation (layer L4, part of `scheduler`;
upstream plugins/noderesources): `fit` (PreFilter/Filter on requests vs allocatable, Score by
strategy), `balanced_allocation`, and the scoring `strategies` (LeastAllocated, MostAllocated,
RequestedToCapacityRatio).

Data flow: PreFilter computes the pod's requests into CycleState -> Filter compares them with
each NodeInfo's requested/allocatable -> Score turns utilisation into 0..100 per the strategy.
"""
