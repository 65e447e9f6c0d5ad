"""The voice channels: Twilio Media Streams (`twilio`) and the browser voice page
(`browser`), both on one call engine (`call.VoiceCall`) and the speech ports of
`keel.speech`. `router` carries their routes."""

from fastapi import APIRouter

from keel.server.voice import browser, twilio

router = APIRouter()
router.include_router(twilio.router)
router.include_router(browser.router)

__all__ = ["router"]
