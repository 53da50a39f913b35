"""Layer L4: the descheduler's in-tree plugins, one module each, upstream names and args;
`registry.in_tree_registry()` maps names to classes."""
