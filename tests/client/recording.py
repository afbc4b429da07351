"""A page recorded as an animated GIF: the README's night and day (issue 22, item 9).

Playwright's own video recording needs its ffmpeg build, which `playwright install` cannot fetch
here, so the page is sampled: a screenshot at a fixed pace with the phase the page showed, made
into a time-lapse with Pillow."""
from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image
from playwright.async_api import Page

PHASE = "() => document.body.dataset.phase || ''"


@dataclass
class Recording:
    frames: list[Image.Image] = field(default_factory=list)
    phases: list[str] = field(default_factory=list)  # the page's phase in each frame

    def save(self, path: Path, *, width: int = 640, frame_ms: int = 250) -> None:
        """A time-lapse GIF, `width` px wide, each sample shown `frame_ms`."""
        shrunk = [frame.resize((width, round(frame.height * width / frame.width)), Image.LANCZOS)
                  for frame in self.frames]
        palette = [frame.convert("P", palette=Image.ADAPTIVE, colors=128) for frame in shrunk]
        palette[0].save(path, save_all=True, append_images=palette[1:], duration=frame_ms, loop=0,
                        optimize=True)


async def record(page: Page, recording: Recording, *, start: str, stop, every_s: float = 1.0,
                 most: int = 240) -> None:
    """Samples `page` (a screenshot every `every_s` s at most) from the first phase starting
    with `start` until `stop(phases)` holds for the phases seen so far, the game is over, or
    `most` frames."""
    await page.wait_for_function(f"() => (document.body.dataset.phase || '').startsWith('{start}')",
                                 timeout=600_000)
    while len(recording.frames) < most:
        phase = await page.evaluate(PHASE)
        shot = await page.screenshot(type="jpeg", quality=80)
        recording.frames.append(Image.open(io.BytesIO(shot)).convert("RGB"))
        recording.phases.append(phase)
        if stop(recording.phases) or phase == "over":
            return
        await asyncio.sleep(every_s)  # the recording's pace, not a wait for anything
