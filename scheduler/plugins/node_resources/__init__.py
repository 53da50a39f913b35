"""NodeResourcesFit and NodeResourcesBalancedAllocation (upstream plugins/noderesources)."""
