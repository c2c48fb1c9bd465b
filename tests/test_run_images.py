"""What a run made, shown to a model that sees: the newest run's images (one picture: the
image, a contact sheet of a batch, frames of an animation) fitted to the window and counted
as the provider counts images; kept with the thread so every later request sends the same
bytes; older runs in words; a model that cannot see gets the words alone."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.base.ui_messages import images_after_results
from comfyui_assistant.core.files.run_images import newest_run, run_files
from comfyui_assistant.core.files.run_outputs import FolderOutputs
from comfyui_assistant.core.files.run_pictures import picture
from comfyui_assistant.core.tokens.image_costs import fit, image_budget, image_cost_for
from comfyui_assistant.core.tokens.token_images import sniff_size
from comfyui_assistant.core.tokens.tokens import MESSAGE_OVERHEAD, counter_for
from PIL import Image

from .conftest import start_app
from .helpers import chat_body, sse_events, user, without_reminders
from .scripted_provider import text_reply


def png(size: tuple[int, int], colour: tuple[int, int, int] = (200, 80, 40)) -> bytes:
    image = Image.new("RGB", size, colour)
    for x in range(0, size[0], 7):  # a little structure, so it is no flat picture
        image.putpixel((x, x % size[1]), (255, 255, 255))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def gif(frames: int, size: tuple[int, int] = (320, 240)) -> bytes:
    images = [Image.new("RGB", size, (i * 20 % 256, 100, 200 - i * 10)) for i in range(frames)]
    out = io.BytesIO()
    images[0].save(out, "GIF", save_all=True, append_images=images[1:], duration=80)
    return out.getvalue()


def run_part(call_id: str, prompt: str, *names: str, ok: bool = True) -> dict[str, Any]:
    output: dict[str, Any] = {"ok": ok, "promptId": prompt, "seconds": 1.5}
    if ok:
        output["outputs"] = {"9": {"images": list(names)}}
        output["looked"] = [f"{n}: PNG" for n in names]
    return {
        "type": "tool-queueWorkflow",
        "toolCallId": call_id,
        "state": "output-available",
        "input": {},
        "output": output,
    }


def run_answer(mid: str, *parts: dict[str, Any], text: str = "") -> dict[str, Any]:
    tail = [{"type": "step-start"}, {"type": "text", "text": text}] if text else []
    return {"id": mid, "role": "assistant", "parts": [{"type": "step-start"}, *parts, *tail]}


def image_of(url: str) -> tuple[bytes, tuple[int, int]]:
    data = base64.b64decode(url.split(",", 1)[1])
    size = sniff_size(data)
    assert size is not None
    return data, size


def shown_images(messages: list[dict[str, Any]]) -> list[str]:
    return [
        p["image_url"]["url"]
        for m in messages
        if isinstance(m.get("content"), list)
        for p in m["content"]
        if p.get("type") == "image_url"
    ]


# --- the pieces ---------------------------------------------------------------------------


def test_a_results_image_goes_to_a_user_message_after_its_round() -> None:
    label = {"type": "text", "text": "[what run p1 made]"}
    image = {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}}
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}, {"id": "c2"}]}
    result = [{"type": "text", "text": "{}"}, label, image]
    shows = {"role": "tool", "tool_call_id": "c1", "content": result}
    other = {"role": "tool", "tool_call_id": "c2", "content": "ok"}
    after = {"role": "assistant", "content": "It looks right."}
    moved = images_after_results([call, shows, other, after])  # type: ignore[list-item]
    assert [m["role"] for m in moved] == ["assistant", "tool", "tool", "user", "assistant"]
    assert moved[1]["content"] == "{}" and moved[3]["content"] == [label, image]
    # a user message follows the round: the picture goes at its head (no two in a row)
    nxt = {"role": "user", "content": "and now?"}
    moved = images_after_results([call, shows, other, nxt])  # type: ignore[list-item]
    assert moved[3]["content"] == [label, image, {"type": "text", "text": "and now?"}]
    nothing = [call, other]
    assert images_after_results(nothing) is nothing  # type: ignore[arg-type]


def test_the_newest_successful_run_with_images_is_found() -> None:
    first = run_part("c1", "p1", "a.png [output]")
    failed = run_part("c2", "p2", ok=False)
    second = run_part("c3", "p3", "sub/b.png [temp]", "clip.mp4 [output]", "b.png [temp]")
    messages = [run_answer("a1", first), run_answer("a2", second), run_answer("a3", failed)]
    assert newest_run(messages) is None  # the newest run failed: it made nothing to show
    assert newest_run(messages[:2]) == (1, 1)
    assert [r.annotated() for r in run_files(second)] == ["sub/b.png [temp]", "b.png [temp]"]
    traversal = run_part("c4", "p4", "../../secret.png [output]")
    assert run_files(traversal) == []


@pytest.mark.parametrize("model", ["gpt-4o", "qwen2.5-vl-7b-instruct", "claude-sonnet-4-5"])
def test_a_picture_fits_the_budget_as_the_provider_counts_it(model: str) -> None:
    cost = image_cost_for(model)
    one = [("x.png [output]", png((1024, 1024)))]
    for budget in (300, 800, 2000):
        made = picture(one, cost, budget)
        if made is None:
            assert fit(cost, 1024, 1024, budget) is None
            continue
        assert made.tokens == cost.tokens(made.width, made.height) <= budget
        assert sniff_size(made.data) == (made.width, made.height)
        assert (made.width, made.height, made.tokens) == fit(cost, 1024, 1024, budget)


def test_a_batch_is_one_contact_sheet_and_an_animation_a_few_frames() -> None:
    cost = image_cost_for("gpt-4o")
    batch = [(f"b{i}.png [output]", png((512, 512), (i * 60, 90, 30))) for i in range(4)]
    sheet = picture(batch, cost, 2000)
    assert sheet is not None and sheet.shows.startswith("a 2×2 contact sheet of 4 images")
    assert abs(sheet.width - sheet.height) <= 2  # four squares on a square grid
    frames = picture([("anim.gif [output]", gif(12))], cost, 2000)
    assert frames is not None and "4 of the animation's 12 frames" in frames.shows
    damaged = picture([("x.png [output]", png((64, 64))[:-20])], cost, 2000)
    assert damaged is None  # a damaged file is not drawn


# --- end to end: the request the provider receives ----------------------------------------


def folders_with(tmp_path: Path, files: dict[str, bytes]) -> FolderOutputs:
    made = {"output": tmp_path / "output", "temp": tmp_path / "temp"}
    for folder in made.values():
        folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (made["output"] / name).write_bytes(data)
    return FolderOutputs(made)


async def test_the_newest_runs_image_reaches_a_vision_model_sized_as_counted(provider, tmp_path):
    outputs = folders_with(tmp_path, {"face.png": png((1024, 1024)), "next.png": png((640, 480))})
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "qwen2.5-vl-7b-instruct",
           "LLM_CONTEXT_WINDOW": "8192", "LLM_VISION": "1"}  # fmt: skip
    app = await start_app(tmp_path / "data", env, outputs=outputs)
    try:
        ask = user("run it and tell me if the face looks right")
        ran = run_answer("a1", run_part("c1", "p1", "face.png [output]"))
        provider.enqueue(text_reply("It looks right."), text_reply("Sure."), text_reply("Ok."))
        status, body = await app.chat(chat_body(ask, ran))
        assert status == 200, body
        first = without_reminders(provider.requests[0]["messages"])
        (url,) = shown_images(first)
        _, size = image_of(url)
        cost, budget = image_cost_for("qwen2.5-vl-7b-instruct"), image_budget(8192)
        assert (*size, cost.tokens(*size)) == fit(cost, 1024, 1024, budget)
        # ... and the request was counted with that cost (the provider's), not gpt-4o's
        counter = counter_for("qwen2.5-vl-7b-instruct")
        image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
        assert counter.message(image) == MESSAGE_OVERHEAD + counter.text("user") + cost.tokens(
            *size
        )
        assert cost.tokens(*size) != image_cost_for("gpt-4o").tokens(*size)
        tool = next(m for m in first if m["role"] == "tool")
        assert isinstance(tool["content"], str) and '"promptId":"p1"' in tool["content"]
        shows = first[first.index(tool) + 1]
        assert shows["role"] == "user" and shows["content"][0]["text"].startswith(
            "[What run p1 made, as you see it: one 1024×1024 image, at"
        )
        # the next turn sends the same bytes, even once the file is gone: append-only
        (tmp_path / "output" / "face.png").unlink()
        answered = run_answer("a1", run_part("c1", "p1", "face.png [output]"), text="Looks right.")
        _, body = await app.chat(chat_body(ask, answered, user("thanks", "u2")))
        second = without_reminders(provider.requests[1]["messages"])
        assert second[: len(first)] == first and shown_images(second) == [url]
        # a newer run: only its image is shown, the older run is its words
        newer = run_answer("a2", run_part("c2", "p2", "next.png [output]"))
        _, body = await app.chat(chat_body(ask, answered, user("again", "u2"), newer))
        third = without_reminders(provider.requests[2]["messages"])
        (newest,) = shown_images(third)
        assert image_of(newest)[1] == fit(cost, 640, 480, budget)[:2]  # type: ignore[index]
        assert any(m["role"] == "tool" and '"promptId":"p1"' in m["content"] for m in third)
    finally:
        await app.close()


async def test_a_model_that_cannot_see_gets_the_runs_facts_in_words(provider, tmp_path):
    outputs = folders_with(tmp_path, {"face.png": png((1024, 1024))})
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": "8192",
           "LLM_VISION": "0"}  # fmt: skip
    app = await start_app(tmp_path / "data", env, outputs=outputs)
    try:
        provider.enqueue(text_reply("It made one 1024×1024 PNG."))
        ran = run_answer("a1", run_part("c1", "p1", "face.png [output]"))
        status, body = await app.chat(chat_body(user("run it"), ran))
        assert status == 200 and not any(e["type"] == "error" for e in sse_events(body))
        sent = provider.requests[0]["messages"]
        assert shown_images(sent) == []
        tool = next(m for m in sent if m["role"] == "tool")
        assert "face.png [output]: PNG" in tool["content"]
    finally:
        await app.close()


def test_an_older_run_is_one_line_that_keeps_what_was_wrong() -> None:
    from comfyui_assistant.core.tools.digests import digest_tool_part

    looked = [
        "ComfyUI_00003_.png [output]: PNG 1024×1024, all black (every pixel at most 0,0,0)",
        "sub/ComfyUI_00004_.png [output]: PNG 1024×1024, looks fine",
        "clip.mp4 [output]: MP4",
    ]
    part = run_part("c1", "5d2c1f0e-0003", "ComfyUI_00003_.png [output]")
    part["output"]["looked"] = looked
    line = digest_tool_part("queueWorkflow", {}, part, "c1")
    assert line == (
        "[digest] queueWorkflow -> run 5d2c1f0e in 1.5 s: 2 PNG 1024×1024, 1 MP4, "
        "ComfyUI_00003_.png all black (every pixel at most 0,0,0) (recall: c1)"
    )
