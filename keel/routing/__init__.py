"""The offline router: routes a user message to an eligible skill with no model call.

`config` reads `routing:` / `extraction:` of agent.yml (pure), `index` embeds the skills'
descriptions and `examples:` once per project and embedder, `router` scores a message
against them, and `keyword` is the plain baseline the bench compares with. The turn loop's
side (`keel.loop.offline`, `keel.loop.no_model`) joins the router and the typed extractors
(`keel.extract`) to the turn.
"""
