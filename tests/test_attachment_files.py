"""Reading attached files: images as ComfyUI saves them (the workflow and prompt in their
metadata), plain images, workflow JSON, text; and every kind of bad input refused with what is
wrong."""

from __future__ import annotations

import json
import zlib

import pytest
from comfyui_assistant.core.attachment_files import FileRefused, model_parts, read_file
from comfyui_assistant.core.image_files import inspect_image
from comfyui_assistant.core.workflow_text import workflow_lines

from .comfy_images import PROMPT, WORKFLOW, comfy_png, comfy_webp, plain


def refused(name: str, data: bytes, **kw) -> FileRefused:
    with pytest.raises(FileRefused) as caught:
        read_file(name, data, **kw)
    return caught.value


def test_a_comfyui_png_gives_its_prompt_and_workflow():
    reading = read_file("ComfyUI_00001_.png", comfy_png(size=(640, 480)))
    assert reading.kind == "comfy-image" and reading.media_type == "image/png"
    assert reading.image is not None and (reading.image.width, reading.image.height) == (640, 480)
    assert reading.workflow == WORKFLOW  # the UI workflow is the one to load
    # what the model reads: the prompt ComfyUI ran, a line per node, links as ←
    lines = reading.text.splitlines()
    assert lines[0].startswith("3 KSampler: seed=156680208700286, steps=20, cfg=8")
    assert "model←4" in lines[0] and "latent_image←5" in lines[0]
    assert '6 CLIPTextEncode: text="a lighthouse at dusk, oil painting", clip←4' in lines
    assert reading.summary == "PNG 640×480, ComfyUI workflow, 7 nodes"


def test_a_comfyui_webp_gives_them_from_its_exif():
    reading = read_file("out.webp", comfy_webp())
    assert reading.kind == "comfy-image" and reading.media_type == "image/webp"
    assert reading.workflow == WORKFLOW
    assert "4 CheckpointLoaderSimple: ckpt_name=" in reading.text


def test_a_png_with_the_workflow_only_reads_the_ui_format():
    reading = read_file("wf.png", comfy_png(prompt=None))
    assert reading.kind == "comfy-image"
    assert reading.text.splitlines() == [
        '6 CLIPTextEncode: ["a lighthouse at dusk, oil painting"], clip←4',
        '4 CheckpointLoaderSimple: ["v1-5-pruned-emaonly.safetensors"]',
    ]


def test_plain_images_and_what_the_user_is_told():
    png = read_file("photo.png", plain("PNG"))
    assert png.kind == "image" and png.workflow is None
    assert png.note == "no ComfyUI workflow in it: attached as a plain image"
    jpeg = read_file("photo.jpg", plain("JPEG", (300, 200)))
    assert jpeg.kind == "image" and jpeg.media_type == "image/jpeg" and jpeg.note == ""
    assert jpeg.summary == "JPEG 300×200"
    gif = read_file("a.gif", plain("GIF"))
    assert gif.media_type == "image/gif"
    broken = read_file("x.png", comfy_png(prompt="{not json", workflow=None))
    assert broken.kind == "image"
    assert broken.note == "its ComfyUI prompt metadata is not valid JSON: attached as a plain image"


def test_damaged_images_are_refused_with_what_is_wrong():
    png = comfy_png()
    cut = refused("cut.png", png[: len(png) // 2])
    assert cut.status == 422 and cut.message.startswith(
        "cut.png cannot be read: the PNG is cut off"
    )
    flipped = bytearray(png)
    flipped[40] ^= 0xFF  # inside the first chunk after the header: its CRC fails
    assert "fails its CRC" in refused("bad.png", bytes(flipped)).message
    # a PNG whose chunks are whole but whose image data is not (CRCs recomputed)
    assert "image data" in refused("data.png", _png_with_bad_idat()).message
    jpeg = plain("JPEG")
    assert "end-of-image" in refused("cut.jpg", jpeg[:-200]).message
    assert "cut off" in refused("cut.webp", comfy_webp()[:-300]).message
    assert (
        refused("cut.gif", plain("GIF")[:-20]).message
        == "cut.gif cannot be read: the GIF is cut off (no trailer)"
    )
    # a file named like an image that is not one
    assert (
        refused("fake.png", b"hello there").message
        == "fake.png cannot be read: it is not a PNG image"
    )


def _png_with_bad_idat() -> bytes:
    data = plain("PNG")
    start = data.index(b"IDAT") - 4
    length = int.from_bytes(data[start : start + 4], "big")
    body = bytes(b ^ 0x55 for b in data[start + 8 : start + 8 + length])
    crc = zlib.crc32(b"IDAT" + body).to_bytes(4, "big")
    return data[: start + 8] + body + crc + data[start + 12 + length :]


def test_unsupported_and_oversized_files_are_refused_at_once():
    pdf = refused("paper.pdf", b"%PDF-1.7\n...")
    assert pdf.status == 415 and pdf.message.startswith(
        "paper.pdf is a PDF, which cannot be attached"
    )
    assert "images (PNG, JPEG, WebP, GIF)" in pdf.message
    assert refused("model.safetensors", b"\x08\x00\x00\x00{}").status == 415
    latin = refused("notes.txt", "caf\xe9".encode("latin-1"))
    assert latin.status == 415 and "not UTF-8 text" in latin.message
    assert refused("empty.txt", b"").message == "empty.txt is empty"
    big = refused("big.png", comfy_png(), max_bytes=1000)
    assert big.status == 413 and big.message.endswith("an attachment can be at most 1000 bytes")
    assert "binary" in refused("x.txt", b"ab\x00cd").message


def test_text_and_workflow_files():
    md = read_file("notes.md", b"# Shot list\n\n1. Wide\n2. Close")
    assert md.kind == "text" and md.media_type == "text/markdown" and md.summary == "text, 4 lines"
    ui = read_file("flow.json", json.dumps(WORKFLOW).encode())
    assert ui.kind == "workflow" and ui.workflow == WORKFLOW and ui.summary == "workflow, 2 nodes"
    api = read_file("api.json", json.dumps(PROMPT).encode())
    assert api.kind == "workflow" and api.summary == "API workflow, 7 nodes"
    other = read_file("data.json", b'{"a": 1}')
    assert other.kind == "text" and other.text == '{"a": 1}'
    bom = read_file("win.txt", "\ufeffhello".encode())
    assert bom.text == "hello"


def test_what_the_model_is_sent():
    reading = read_file("c.png", comfy_png())
    seen = model_parts("att_1", "c.png", reading, comfy_png(), vision=True)
    assert [p["type"] for p in seen] == ["file", "text"]
    assert seen[0]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    head = seen[1]["text"].splitlines()[0]
    assert head == (
        "[attached image c.png, 64×48; ComfyUI made it, its workflow is below (load it with "
        'loadWorkflow {"attachment":"att_1"})]'
    )
    blind = model_parts("att_1", "c.png", reading, comfy_png(), vision=False)
    assert [p["type"] for p in blind] == ["text"]
    assert "not shown: this model cannot see images" in blind[0]["text"]
    assert "3 KSampler" in blind[0]["text"]


def test_long_workflows_are_cut_with_a_note():
    prompt = {str(i): {"class_type": "Note", "inputs": {"text": "x" * 50}} for i in range(100)}
    text = workflow_lines(prompt, 1000)
    assert len(text) <= 1100 and text.endswith("more nodes (load the workflow to see them)")
    assert inspect_image(comfy_png()).texts.keys() == {"prompt", "workflow"}


def test_a_decompression_bomb_is_refused_before_it_is_inflated():
    # a few KB of PNG that claims 20000x20000 pixels (1.2 GB of pixels): refused from its header
    data = bytearray(plain("PNG"))
    data[16:24] = (20_000).to_bytes(4, "big") * 2
    data[29:33] = zlib.crc32(bytes(data[12:29])).to_bytes(4, "big")
    message = refused("bomb.png", bytes(data)).message
    assert message == (
        "bomb.png cannot be read: it is 20000×20000 pixels; images of more than 100 megapixels "
        "are not taken (scale it down first)"
    )
