"""Layer L4: the descheduler framework: plugin contracts (`interface`), the evictor handle and
the per-profile runner (`profile`). Plugins choose *what* to evict; DefaultEvictor decides
*whether*; `descheduler.evictions.PodEvictor` performs it through `pods/eviction`."""
