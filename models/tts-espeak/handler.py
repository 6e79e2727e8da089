"""Text to speech with eSpeak NG, as a serverless queue worker (runpod-python's own worker,
`runpod.serverless.start`, unmodified).

Input:  {"text": "...", "voice": "en", "speed": 1.0}
          text   1..TTS_MAX_CHARS characters (default 2000), no control characters but tab/newline
          voice  optional, default TTS_DEFAULT_VOICE ("en"); one of the languages `espeak-ng --voices`
                 lists in this image (en, en-us, de, fr, ...), checked against that list
          speed  optional, 0.5..2.5 times the normal rate (1.0 = 175 words per minute)
Output: {"audio_base64": <WAV, 22050 Hz mono 16-bit PCM>, "mime_type": "audio/wav",
         "voice": <voice>, "sample_rate": 22050, "usage": {"units": <seconds of audio>}}
A refused input returns {"error": "<what is wrong>"}: runpod-python fails the job with that string.

Nothing from the input reaches a shell or an option: espeak-ng runs from an argv list, the voice
only after it matched an installed voice, the speed as a number, and the text after `--`, so a
text such as "--help" or "-w /etc/x" is spoken, never parsed.
"""

import base64
import os
import re
import struct
import subprocess
import tempfile

import runpod

ESPEAK = "/usr/bin/espeak-ng"
MAX_CHARS = int(os.environ.get("TTS_MAX_CHARS", "2000"))
DEFAULT_VOICE = os.environ.get("TTS_DEFAULT_VOICE", "en")
NORMAL_WPM = 175
SPEED_RANGE = (0.5, 2.5)
# the job-done body is limited (20 MiB on gpufleet); base64 adds a third
MAX_WAV_BYTES = 12 * 1024 * 1024
TIMEOUT_S = 120
VOICE_GRAMMAR = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]{1,8}){0,3}$")
# C0 controls but tab, newline and carriage return; DEL and the C1 controls
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def installed_voices():
    """The voices `espeak-ng --voices` lists, read once at start: each by its language (second
    column, "en-us") and by its file's name (fifth column, "gmw/en" -> "en"), lower case."""
    listing = subprocess.run([ESPEAK, "--voices"], capture_output=True, text=True, check=True, timeout=30).stdout
    voices = set()
    for line in listing.splitlines()[1:]:
        cols = line.split()
        names = [cols[1], cols[4].rsplit("/", 1)[-1].lower()] if len(cols) >= 5 else []
        voices.update(n for n in names if VOICE_GRAMMAR.match(n))
    if not voices:
        raise RuntimeError("espeak-ng lists no voices")
    return frozenset(voices)


VOICES = installed_voices()


class InputError(ValueError):
    pass


def parse_input(inp):
    if not isinstance(inp, dict):
        raise InputError("input must be an object: {\"text\": \"...\"}")
    unknown = sorted(set(inp) - {"text", "voice", "speed"})
    if unknown:
        raise InputError(f"input.{unknown[0]}: unknown field (allowed: text, voice, speed)")
    text = inp.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InputError("input.text: required, a non-empty string")
    if len(text) > MAX_CHARS:
        raise InputError(f"input.text: at most {MAX_CHARS} characters (got {len(text)})")
    if CONTROL.search(text):
        raise InputError("input.text: control characters are not allowed")
    voice = inp.get("voice", DEFAULT_VOICE)
    if not isinstance(voice, str) or not VOICE_GRAMMAR.match(voice) or voice not in VOICES:
        shown = voice[:40] if isinstance(voice, str) else type(voice).__name__
        raise InputError(f"input.voice: {shown!r} is not an installed voice (for example en, en-us, de, fr)")
    speed = inp.get("speed", 1.0)
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not SPEED_RANGE[0] <= speed <= SPEED_RANGE[1]:
        raise InputError(f"input.speed: a number from {SPEED_RANGE[0]} to {SPEED_RANGE[1]}")
    return text, voice, float(speed)


def wav_seconds(wav):
    """Duration of a RIFF/WAVE PCM file: data bytes / byte rate, read from its chunks."""
    if len(wav) < 12 or wav[0:4] != b"RIFF" or wav[8:12] != b"WAVE":
        raise RuntimeError("espeak-ng wrote no RIFF/WAVE file")
    pos, byte_rate, sample_rate, data = 12, None, None, None
    while pos + 8 <= len(wav):
        cid, size = wav[pos:pos + 4], struct.unpack_from("<I", wav, pos + 4)[0]
        if cid == b"fmt ":
            _fmt, _channels, sample_rate, byte_rate = struct.unpack_from("<HHII", wav, pos + 8)
        elif cid == b"data":
            data = min(size, len(wav) - pos - 8)
            break
        pos += 8 + size + (size & 1)
    if not byte_rate or data is None:
        raise RuntimeError("espeak-ng wrote a WAV file without fmt or data chunk")
    return data / byte_rate, sample_rate


def synthesize(text, voice, speed):
    wpm = round(NORMAL_WPM * speed)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "speech.wav")
        argv = [ESPEAK, "-v", voice, "-s", str(wpm), "-w", out, "--", text]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"espeak-ng exited {done.returncode}: {done.stderr.strip()[:500]}")
        if os.path.getsize(out) > MAX_WAV_BYTES:
            raise InputError(f"the speech is longer than {MAX_WAV_BYTES // 44100} s of audio; send shorter text")
        with open(out, "rb") as f:
            return f.read()


def handler(job):
    try:
        text, voice, speed = parse_input(job.get("input"))
        wav = synthesize(text, voice, speed)
    except InputError as err:
        return {"error": str(err)}
    seconds, sample_rate = wav_seconds(wav)
    return {
        "audio_base64": base64.b64encode(wav).decode("ascii"),
        "mime_type": "audio/wav",
        "voice": voice,
        "sample_rate": sample_rate,
        "usage": {"units": seconds},
    }


if __name__ == "__main__":
    runpod.serverless.start({"handler": handler})
