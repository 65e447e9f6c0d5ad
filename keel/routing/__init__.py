"""The offline router: routes a user message to an eligible skill with no model call.

`index` embeds the skills' descriptions and `examples:` once per project and embedder,
`router` scores a message against them, and `keyword` is the plain baseline the bench
compares with. The `routing:` / `extraction:` keys of agent.yml are read with the rest of
the project (`keel.project.offline_config`). The turn loop's
side (`keel.loop.offline`, `keel.loop.no_model`) joins the router and the typed extractors
(`keel.extract`) to the turn.
"""
