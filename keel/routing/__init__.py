"""The offline router: routes a user message to an eligible skill with no model call.

`config` reads `routing:` / `extraction:` of agent.yml (pure), `index` embeds the skills'
descriptions and `examples:` once per project and embedder, `router` scores a message
against them, `keyword` is the plain baseline the bench compares with, and `offline`
joins the router and the typed extractors (`keel.extract`) to the turn loop.
"""
