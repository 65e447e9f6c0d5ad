// Keel voice page: the microphone's AudioWorklet. It low-pass filters the context's audio
// (44.1 or 48 kHz, mono) below 16 kHz's Nyquist frequency, resamples it to 16 kHz and posts
// 20 ms frames of PCM16 (320 samples, an ArrayBuffer, transferred) to the page.
const TARGET_RATE = 16000;
const FRAME_SAMPLES = 320; // 20 ms at 16 kHz
const TAPS = 63; // windowed-sinc low-pass, odd length

function lowPass(inputRate) {
  const cutoff = (0.45 * TARGET_RATE) / inputRate; // cycles per input sample
  const middle = (TAPS - 1) / 2;
  const taps = new Float32Array(TAPS);
  let sum = 0;
  for (let i = 0; i < TAPS; i += 1) {
    const x = i - middle;
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
    const window = 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (TAPS - 1)); // Hamming
    taps[i] = sinc * window;
    sum += taps[i];
  }
  for (let i = 0; i < TAPS; i += 1) taps[i] /= sum;
  return taps;
}

class Downsampler extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / TARGET_RATE; // input samples per output sample
    this.taps = lowPass(sampleRate);
    this.history = new Float32Array(TAPS); // the last TAPS input samples, a ring
    this.at = 0; // ring position of the next sample
    this.filtered = [0, 0]; // the last two filtered samples (linear interpolation)
    this.phase = 0; // position of the next output between the two, in input samples
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.filled = 0;
    this.port.onmessage = (event) => {
      if (event.data === "stop") this.stopped = true;
    };
  }

  filter(sample) {
    this.history[this.at] = sample;
    this.at = (this.at + 1) % TAPS;
    let acc = 0;
    let index = this.at;
    for (let i = 0; i < TAPS; i += 1) {
      acc += this.taps[i] * this.history[index];
      index = index + 1 === TAPS ? 0 : index + 1;
    }
    return acc;
  }

  emit(value) {
    const clipped = Math.max(-1, Math.min(1, value));
    this.frame[this.filled] = clipped < 0 ? clipped * 0x8000 : clipped * 0x7fff;
    this.filled += 1;
    if (this.filled === FRAME_SAMPLES) {
      const out = this.frame.buffer;
      this.port.postMessage(out, [out]);
      this.frame = new Int16Array(FRAME_SAMPLES);
      this.filled = 0;
    }
  }

  process(inputs) {
    if (this.stopped) return false;
    const channel = inputs[0] && inputs[0][0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i += 1) {
      this.filtered[0] = this.filtered[1];
      this.filtered[1] = this.filter(channel[i]);
      // Outputs fall between the previous and this filtered sample: phase in [0, 1).
      while (this.phase < 1) {
        this.emit(this.filtered[0] + (this.filtered[1] - this.filtered[0]) * this.phase);
        this.phase += this.step;
      }
      this.phase -= 1;
    }
    return true;
  }
}

registerProcessor("keel-downsampler", Downsampler);
