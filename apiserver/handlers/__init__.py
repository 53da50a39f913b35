"""HTTP handlers (layer L4; the only place besides `app` that uses aiohttp.web).

Data flow: `authn` (the TLS listener's authentication middleware: who the request is) ->
`dispatch` (routing, error middleware) -> `verbs` / `watch` / `subresources` /
`openapi` / `debug` / `discovery` -> the request core (`apiserver.core.ApiCore`), with `codec`
decoding bodies and encoding responses, `common` parsing paths and options, and `tables`
rendering `as=Table`. Handlers hold no semantics: every rule is in the core or a strategy.
"""
