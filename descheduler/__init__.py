"""Layer L4: the descheduler loop (sigs descheduler semantics: strategies choose *what* to evict,
one evictor decides *whether*, evictions go through the Eviction API).

Not built yet (a coming issue); the package exists so the layer contracts cover it."""
