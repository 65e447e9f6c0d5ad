"""The web UI (chat, Inspector, plan console): static pages served by `keel run`.

The HTML, CSS and ES-module JavaScript live in `static/` as package data (no build step,
no CDN); `keel.server.ui.routes` serves them.
"""
