"""Reading attached files: images as ComfyUI saves them (the workflow and prompt in their
metadata), plain images, workflow JSON, text; and every kind of bad input refused with what is
wrong."""

from __future__ import annotations

import io
import json
import time
import tracemalloc
import zlib

import pytest
from comfyui_assistant.core.files.attachment_files import FileRefused, model_parts, read_file
from comfyui_assistant.core.files.image_files import inspect_image
from comfyui_assistant.core.files.workflow_text import workflow_lines
from comfyui_assistant.core.tools.tool_registry import get_tool
from PIL import Image

from .comfy_images import (
    PROMPT,
    WORKFLOW,
    comfy_png,
    comfy_webp,
    deflate_repeated,
    exif_bomb,
    picture,
    pixel_bomb,
    plain,
    png_chunk,
    png_with,
    text_bomb,
)


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


def test_a_pasted_workflow_names_its_id_and_findmissing_says_where_to_find_it():
    # the panel attaches a pasted workflow as this file (ui/src/runtime/pastedWorkflow.ts)
    data = json.dumps(PROMPT, indent=2).encode()
    reading = read_file("pasted-workflow.json", data)
    [note] = model_parts("att_7", "pasted-workflow.json", reading, data, vision=True)
    assert note["text"].startswith(
        "[attached ComfyUI workflow pasted-workflow.json (API workflow, 7 nodes); "
        'load it with loadWorkflow {"attachment":"att_7"}]\n'
    )
    spec = get_tool("findMissing")
    assert spec is not None
    described = spec.parameters["properties"]["attachmentId"]["description"]
    assert "[attached" in described and '{"attachment": id}' in described


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


def test_a_text_bomb_is_refused_past_its_limit_without_inflating_it_all():
    # 520 KB of zTXt that inflates to 512 MB (before: inflated whole, 3 GB of server memory
    # and a 537 MB stored row): inflated no further than 8 MB, refused naming the limit
    bomb = text_bomb(512)
    assert len(bomb) < 600_000
    tracemalloc.start()
    started = time.monotonic()
    try:
        got = refused("bomb.png", bomb)
        took, (_, peak) = time.monotonic() - started, tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got.status == 413 and got.message == (
        "bomb.png cannot be read: its metadata text 'workflow' is more than 8 MB, the most one "
        "may be (a ComfyUI workflow is a few MB at most)"
    )
    assert peak < 40_000_000 and took < 2, (peak, took)
    assert refused("i.png", text_bomb(64, kind=b"iTXt")).status == 413  # (iTXt, compressed)


def test_many_texts_together_are_capped_too():
    # texts within the cap one by one, 7 MB each under other keys: 16 MB in all at most
    texts = [_ztxt(f"note{i}", 7) for i in range(3)]
    got = refused("many.png", png_with(1, 1, zlib.compress(bytes(4)), *texts))
    assert got.status == 413 and got.message.endswith(
        "its metadata texts add up to more than 16 MB, the most an image may carry"
    )
    # damaged texts count what they inflated before their damage, kept or not
    broken = [_ztxt(f"note{i}", 7)[:-40] + b"\0" * 4 for i in range(3)]  # (CRCs fixed below)
    broken = [png_chunk(b"zTXt", chunk[8:-4]) for chunk in broken]
    assert refused("cut.png", png_with(1, 1, zlib.compress(bytes(4)), *broken)).status == 413
    # and uncompressed texts are kept no longer than compressed ones
    long = png_chunk(b"tEXt", b"workflow\x00" + b"a" * (9 << 20))
    assert refused("long.png", png_with(1, 1, zlib.compress(bytes(4)), long)).status == 413
    ok = png_with(1, 1, zlib.compress(bytes(4)), _ztxt("workflow", 7))
    assert len(inspect_image(ok).texts["workflow"]) == 7 << 20


def test_a_webp_exif_bomb_reads_shared_bytes_once_and_caps_the_rest():
    # 65,535 EXIF entries all pointing at one value: each was decoded into its own copy
    # before any cap (800 KB of file: 2.2 GB of server memory, then 201)
    def read(name, data):
        tracemalloc.start()  # (its peak RSS and time in a server: bench/image_bombs.py)
        try:
            try:
                got = read_file(name, data)
            except FileRefused as exc:
                got = exc
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 40_000_000, (name, peak)
        return got

    plain_bomb = exif_bomb(800_000)
    assert len(plain_bomb) == 800_012 and Image.open(io.BytesIO(plain_bomb)).size == (16, 16)
    got = read("plain.webp", plain_bomb)  # one value, not "key:value": a plain image
    assert (got.kind, got.summary, got.note) == (
        "image",
        "WEBP 16×16",
        "no ComfyUI workflow in it: attached as a plain image",
    )
    text = read("text.webp", exif_bomb(837_000, b"workflow:" + b"a" * 50))  # read once
    assert (text.kind, text.note) == (
        "image",
        "its ComfyUI workflow metadata is not valid JSON: attached as a plain image",
    )
    # entries each one byte further: 2,000 different texts of 774 KB (1.5 GB), refused at
    # the cap of all texts; 1,001 small ones at the cap of their number
    overlapping = read("overlap.webp", exif_bomb(800_000, entries=2_000, shared=False))
    assert overlapping.status == 413 and overlapping.message == (
        "overlap.webp cannot be read: its metadata texts add up to more than 16 MB, the most "
        "an image may carry"
    )
    many = read("many.webp", exif_bomb(26_000, entries=1_001, shared=False))
    assert many.status == 413 and many.message == (
        "many.webp cannot be read: it carries more than 1,000 metadata texts, the most an image "
        "may (ComfyUI writes two)"
    )
    # a ComfyUI WebP is read as before
    assert read("out.webp", comfy_webp()).workflow == WORKFLOW


def test_many_png_text_chunks_are_capped_by_number_and_by_their_keys():
    # a million empty texts under different keys cost nothing each, but a dict of a million
    chunks = [png_chunk(b"tEXt", f"k{i}".encode() + b"\0") for i in range(1_001)]
    got = refused("keys.png", png_with(1, 1, zlib.compress(bytes(4)), *chunks))
    assert got.status == 413 and "more than 1,000 metadata texts" in got.message
    ok = png_with(1, 1, zlib.compress(bytes(4)), *chunks[:998], *_comfy_chunks())
    assert inspect_image(ok).texts.keys() >= {"k0", "k997", "workflow", "prompt"}
    # keys count with their texts: 240 texts of 69,900 bytes fit in 16 MB, not with their keys
    long_keys = [
        png_chunk(b"tEXt", f"{i:079d}".encode() + b"\0" + b"x" * 69_900) for i in range(240)
    ]
    assert refused("long.png", png_with(1, 1, zlib.compress(bytes(4)), *long_keys)).status == 413


def test_files_of_countless_empty_chunks_are_refused_at_a_count():
    # 20 MB of empty chunks (segments) took 8 to 12 s to walk, on a server's worker thread
    jpeg, webp = plain("JPEG"), plain("WEBP")
    scan = jpeg.index(b"\xff\xda")
    body = webp[12:] + b"ABCD\0\0\0\0" * 100_001
    files = {
        "PNG": png_with(1, 1, zlib.compress(bytes(4)), *[png_chunk(b"abcd", b"")] * 100_001),
        "JPEG": jpeg[:scan] + b"\xff\xfe\x00\x02" * 100_001 + jpeg[scan:],
        "WebP": b"RIFF" + (len(body) + 4).to_bytes(4, "little") + b"WEBP" + body,
    }
    for kind, data in files.items():
        got = refused(f"many.{kind.lower()}", data)
        assert got.status == 422 and got.message == (
            f"many.{kind.lower()} cannot be read: the {kind} is damaged: it has more than "
            "100,000 chunks (an image has a few thousand at most)"
        )
    # as many as that is taken
    assert inspect_image(jpeg[:scan] + b"\xff\xfe\x00\x02" * 99_000 + jpeg[scan:]).width == 64


def _comfy_chunks() -> list[bytes]:
    data = comfy_png()
    chunks, pos = [], 8
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        if data[pos + 4 : pos + 8] == b"tEXt":
            chunks.append(data[pos : pos + 12 + length])
        pos += 12 + length
    return chunks


def _ztxt(key: str, megabytes: int) -> bytes:
    return png_chunk(
        b"zTXt", key.encode() + b"\0\0" + deflate_repeated(b"b" * (1 << 20), megabytes)
    )


def test_image_data_that_inflates_past_its_header_is_refused_early():
    # 10000×10000 one-bit grey: 12.5 MB of rows; the data inflates to 64 MB (before: inflated
    # to the end whatever its size, 19.5 GB for a 20 MB file)
    bomb = pixel_bomb(64, depth=1, colour=0)
    started = time.monotonic()
    got = refused("pixels.png", bomb)
    assert time.monotonic() - started < 1
    assert got.status == 422 and got.message == (
        "pixels.png cannot be read: the PNG is damaged: its image data inflates past the "
        "12,510,000 bytes its 10000×10000 header gives (a decompression bomb?)"
    )
    # exactly what the header gives is taken; less is damage
    exact = deflate_repeated(bytes(1 << 20), 11, tail=bytes(12_510_000 - (11 << 20)))
    assert inspect_image(png_with(10_000, 10_000, exact, depth=1, colour=0)).width == 10_000
    short = refused("short.png", png_with(100, 100, zlib.compress(bytes(30_000))))
    assert short.message.endswith("holds 30,000 of the 30,100 bytes its 100×100 header gives")
    odd = refused("odd.png", png_with(4, 4, zlib.compress(bytes(20)), depth=3, colour=0))
    assert "unknown pixel format: colour type 0, bit depth 3" in odd.message


@pytest.mark.parametrize("size", [(1, 1), (3, 5), (9, 9), (33, 31), (5, 1)])
@pytest.mark.parametrize(("depth", "colour"), [(8, 2), (1, 0), (16, 6), (8, 4)])
def test_the_size_of_image_data_is_what_pillow_reads(size, depth, colour):
    # an Adam7-interlaced image of the size we compute loads in Pillow; a byte less does not
    width, height = size
    header = {"depth": depth, "colour": colour, "interlace": 1}
    for extra, loads in ((0, True), (-1, False)):
        rows = bytes(_adam7_bytes(width, height, depth, colour) + extra)
        data = png_with(width, height, zlib.compress(rows), **header)
        try:
            Image.open(io.BytesIO(data)).load()
        except OSError:
            assert not loads
        else:
            assert loads
            assert inspect_image(data).width == width
    assert read_file("p.png", plain("PNG", size)).image is not None  # (not interlaced)


def _adam7_bytes(width: int, height: int, depth: int, colour: int) -> int:
    bits = depth * {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    total = 0
    for x, y, dx, dy in ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4),
                         (1, 0, 2, 2), (0, 1, 1, 2)):  # fmt: skip
        w, h = len(range(x, width, dx)), len(range(y, height, dy))
        total += h * (1 + (w * bits + 7) // 8) if w and h else 0
    return total


def test_pillow_images_of_every_mode_are_taken():
    for mode in ("1", "L", "P", "RGB", "RGBA", "LA", "I;16"):
        out = io.BytesIO()
        picture((37, 23)).convert(mode).save(out, format="PNG")
        assert inspect_image(out.getvalue()).height == 23, mode


ODD_WORKFLOWS = [  # UI or API workflows of shapes no ComfyUI writes (each raised before)
    {"nodes": [{"id": 1, "type": "A"}], "links": 5},
    {"nodes": [{"id": 1, "inputs": [{"name": "x", "link": [1]}]}], "links": [[[1], 2, 3]]},
    {"nodes": [{"id": 1, "inputs": [{"name": "x", "link": 1}]}], "links": [{"id": {}}]},
    {"nodes": [{"id": 1, "inputs": 3, "mode": [2]}]},
    {"nodes": [{"id": [1], "type": {"a": 1}}], "definitions": [1]},
    {"nodes": [], "definitions": {"subgraphs": {"a": 1}}},
    {"nodes": [], "definitions": {"subgraphs": [1, "x", {"name": ["n"]}]}},
    {"²": {"class_type": "A", "inputs": {"x": [{"a": 1}, 0]}}},
    {"9" * 5000: {"class_type": "A"}, "1": {"class_type": "B"}},
]


@pytest.mark.parametrize("workflow", ODD_WORKFLOWS)
def test_workflows_of_odd_shapes_are_read(workflow):
    for reading in (
        read_file("odd.json", json.dumps(workflow).encode()),
        read_file("odd.png", comfy_png(prompt=None, workflow=workflow)),
    ):
        assert reading.workflow == workflow and reading.text is not None
        assert reading.kind in ("workflow", "comfy-image")
        json.dumps(reading.workflow, allow_nan=False)


def test_json_a_browser_cannot_read_is_refused_or_kept_as_text():
    deep = b'{"nodes": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    nan = b'{"nodes": [{"id": 1, "widgets_values": [NaN]}]}'
    assert refused("deep.json", deep).message == (
        "deep.json cannot be read: it is nested more than 64 levels deep (a ComfyUI workflow: "
        "about 10)"
    )
    assert refused("nan.json", nan).message == (
        "nan.json cannot be read: it holds NaN, which JSON has no value for (a browser cannot "
        "read it): write a number or null instead"
    )
    assert refused("inf.json", b"[Infinity]").status == 422
    lone = b'{"nodes": [{"title": "a\\ud800b"}]}'  # (a half surrogate pair: not UTF-8 text)
    assert "half of a UTF-16 surrogate pair" in refused("lone.json", lone).message
    pair = read_file("pair.json", b'{"nodes": [{"title": "\\ud83d\\ude00"}]}')
    assert pair.workflow == {"nodes": [{"title": "\U0001f600"}]}
    just_deep = b"[" * 65 + b"]" * 65  # (not a workflow, but as deep as no workflow is)
    assert "64 levels" in refused("list.json", just_deep).message
    # as text (.txt) they are what they are; in an image, broken metadata
    assert read_file("nan.txt", nan).kind == "text" and read_file("d.txt", deep).kind == "text"
    for text in (deep.decode(), nan.decode(), lone.decode()):
        png = read_file("x.png", _png_text(text))
        assert png.kind == "image" and png.workflow is None
        assert (
            png.note == "its ComfyUI workflow metadata is not valid JSON: attached as a plain image"
        )
    # odd JSON that is no workflow: text
    for value in ([], [1, 2], 3, "x", None, {"nodes": 3}, {"1": {"class_type": 4}}, {}):
        assert read_file("v.json", json.dumps(value).encode()).kind == "text"


def _png_text(text: str) -> bytes:
    chunk = png_chunk(b"tEXt", b"workflow\x00" + text.encode("latin-1"))
    return png_with(1, 1, zlib.compress(bytes(4)), chunk)
