"""The built-in client commands `minik3s apply|get|delete|describe` (layer L5, CLI).

Why: people without kubectl still need to put manifests into the cluster and look at it. These
commands speak only the public HTTP API, exactly as kubectl 1.33 does, so what they show is what
kubectl would show:

- names are resolved through the server's discovery documents (`/api`, `/api/v1`, `/apis`,
  `/apis/<g>/<v>`): plural, singular, short name, kind, `resource.group`, `resource.version.group`
  (discovery.py);
- `get` asks for server-side Tables (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`) and
  lays the cells out with the same elastic tab stops kubectl uses (Go text/tabwriter with
  minwidth 6, padding 3, widths remembered across a watch) (get.py, printers.py, tabwriter.py);
- `apply` is server-side apply with field manager `minik3s-apply` and `force=true` (apply.py);
- `delete` waits for graceful deletion to finish (list + watch on `metadata.name`) unless
  `--wait=false` (delete.py);
- `describe` prints kubectl's sections for pods, nodes, deployments, replica sets and config
  maps, the generic describer's nested dump for every other kind, and the object's Events
  (describe.py).

Data flow: argparse (commands.py) -> `_cmd` (sync; server from the kubeconfig, loop from
`minik3s.cli.common.run_async`) -> `run_*` coroutines -> `Api` (api.py, over
`minik3s.client.rest.HttpClient`) -> printers -> stdout; errors go to stderr as kubectl prints
them (`Error from server (NotFound): pods "nope" not found`, errors.py) and the command exits 1.
Colour only when the stream is a terminal and `NO_COLOR` is unset (palette.py).

Modules import only downwards: errors, palette, tabwriter < api < discovery < manifests <
printers < apply, get, delete, describe < commands.
"""
