"""Speech: the ASR, TTS and VAD ports, audio helpers and the engines behind them.

`keel.speech` is an adapter layer: the ports (`keel.speech.ports`) are plain protocols and
values, the engines (local pocketsphinx / espeak-ng / webrtcvad, Deepgram over its SDK) do
the IO. Voice channels (`keel.server.voice`) and the loop's voice mode build on the ports.
"""
