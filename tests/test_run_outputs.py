"""A run's outputs: read only from ComfyUI's output and temp folders (its own folders inside
ComfyUI, its /view standalone), and looked at (format, size, all black, blank, wrong size)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from aiohttp import web
from comfyui_assistant.core.files.image_files import BadImage
from comfyui_assistant.core.files.output_checks import look_at
from comfyui_assistant.core.files.run_outputs import (
    FolderOutputs,
    OutputRefused,
    ViewOutputs,
    output_ref,
    parse_annotated,
)
from comfyui_assistant.tests.comfy_standin.view import add_view_route, standin_folders
from PIL import Image

from .conftest import start_app
from .helpers import serve_routes


def png(size: tuple[int, int] = (64, 48), colour: object = (0, 0, 0), draw: bool = False) -> bytes:
    image = Image.new("RGB", size, colour)  # type: ignore[arg-type]
    if draw:  # a picture: a gradient and a bright square
        for x in range(size[0]):
            for y in range(size[1]):
                image.putpixel((x, y), (x * 4 % 256, y * 5 % 256, 128))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    made = {"output": tmp_path / "output", "temp": tmp_path / "temp"}
    for folder in made.values():
        (folder / "sub").mkdir(parents=True)
    (made["output"] / "ComfyUI_00001_.png").write_bytes(png(draw=True))
    (made["output"] / "sub" / "black.png").write_bytes(png())
    (made["temp"] / "preview.png").write_bytes(png(colour=(200, 200, 200)))
    return made


@pytest.mark.parametrize(
    ("filename", "subfolder", "kind", "says"),
    [
        ("x.png", "", "input", "type must be 'output' or 'temp'"),
        ("../x.png", "", "output", "a file's name alone"),
        ("a\\x.png", "", "output", "a file's name alone"),
        ("x.png", "../../etc", "output", "a folder inside ComfyUI's output folder"),
        ("x.png", "/etc", "output", "a folder inside"),
        ("x.png", "C:/Windows", "temp", "a folder inside ComfyUI's temp folder"),
        ("model.safetensors", "", "output", "is not an image or a video"),
        ("", "", "output", "filename must be the name of a file"),
    ],
)
def test_only_image_and_video_files_of_the_output_and_temp_folders_are_named(
    filename: str, subfolder: str, kind: str, says: str
) -> None:
    with pytest.raises(OutputRefused, match=says) as refused:
        output_ref(filename, subfolder, kind)
    assert refused.value.status == 400


def test_comfyuis_annotated_names_are_read_back() -> None:
    assert parse_annotated("sub/x.png [temp]") == output_ref("x.png", "sub", "temp")
    assert (
        parse_annotated("ComfyUI_00001_.png [output]").annotated() == "ComfyUI_00001_.png [output]"
    )
    assert parse_annotated("clip.mp4").type == "output"
    with pytest.raises(OutputRefused):
        parse_annotated("../../secret.png [output]")


async def test_a_file_is_read_from_its_folder_and_never_from_outside_it(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    outputs = FolderOutputs(folders)
    assert await outputs.read(output_ref("black.png", "sub")) == png()
    assert (await outputs.read(output_ref("preview.png", "", "temp")))[:4] == b"\x89PNG"
    with pytest.raises(OutputRefused, match="is not in ComfyUI's output folder") as missing:
        await outputs.read(output_ref("preview.png"))  # (it is in temp)
    assert missing.value.status == 404
    (tmp_path / "secret.png").write_bytes(png())
    os.symlink(tmp_path / "secret.png", folders["output"] / "link.png")
    with pytest.raises(OutputRefused, match="leads out of ComfyUI's output folder") as out:
        await outputs.read(output_ref("link.png"))
    assert out.value.status == 403
    with pytest.raises(OutputRefused, match="at most 100 are read") as big:
        await outputs.read(output_ref("ComfyUI_00001_.png"), limit=100)
    assert big.value.status == 413


async def test_standalone_reads_through_a_comfyuis_view(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    routes = web.RouteTableDef()
    served = standin_folders(tmp_path / "standin")
    (served["output"] / "sub").mkdir()
    (served["output"] / "sub" / "x.png").write_bytes(png(draw=True))
    add_view_route(routes, served)
    runner, url = await serve_routes(routes)
    try:
        view = ViewOutputs(url)
        assert await view.read(output_ref("x.png", "sub")) == png(draw=True)
        with pytest.raises(OutputRefused, match=r"ComfyUI has no x\.png") as missing:
            await view.read(output_ref("x.png"))
        assert missing.value.status == 404
        with pytest.raises(OutputRefused, match="is over 10 bytes") as big:
            await view.read(output_ref("x.png", "sub"), limit=10)
        assert big.value.status == 413
    finally:
        await runner.cleanup()
    with pytest.raises(OutputRefused, match="could not be reached") as gone:
        await view.read(output_ref("x.png", "sub"))
    assert gone.value.status == 502


def test_the_checks_tell_a_failed_decode_a_blank_image_and_the_wrong_size() -> None:
    black = look_at(output_ref("a.png"), png(), decoded=True)
    assert black.checked and black.findings == (
        "all black (the usual sign of a failed VAE decode: NaN values)",
    )
    assert black.line() == (
        "a.png [output]: PNG 64×48, all black (the usual sign of a failed VAE decode: NaN values)"
    )
    # no latent decode upstream (an EmptyImage saved as it is): black, and no cause made up
    empty = look_at(output_ref("a.png"), png())
    assert empty.findings == ("all black",)
    assert empty.line() == "a.png [output]: PNG 64×48, all black"
    grey = look_at(output_ref("b.png", "", "temp"), png(colour=(120, 121, 119)))
    assert grey.findings == ("blank: one flat colour (RGB 120,121,119), no picture",)
    good = look_at(output_ref("c.png"), png(draw=True), expected=(64, 48))
    assert good.findings == () and good.line() == "c.png [output]: PNG 64×48, looks fine"
    wrong = look_at(output_ref("c.png"), png(draw=True), expected=(1024, 1024))
    assert wrong.findings == ("it is 64×48, not the 1024×1024 asked for",)
    assert wrong.as_json() == {
        "name": "c.png [output]", "line": wrong.line(), "format": "png",
        "bytes": len(png(draw=True)), "width": 64,
        "height": 48, "pixelsChecked": True,
        "findings": ["it is 64×48, not the 1024×1024 asked for"],
    }  # fmt: skip


def test_a_picture_with_a_little_light_on_black_is_not_called_all_black() -> None:
    image = Image.new("RGB", (512, 512), (0, 0, 0))
    image.putpixel((300, 200), (255, 250, 240))  # one star
    out = io.BytesIO()
    image.save(out, "PNG")
    assert look_at(output_ref("night.png"), out.getvalue()).findings == ()


def test_jpeg_gif_frames_a_video_and_a_damaged_file() -> None:
    jpeg = io.BytesIO()
    Image.new("RGB", (800, 600), (0, 0, 0)).save(jpeg, "JPEG")
    assert look_at(output_ref("x.jpg"), jpeg.getvalue()).findings[0].startswith("all black")
    frames = [Image.new("RGB", (32, 32), (i * 60, 0, 0)) for i in range(4)]
    gif = io.BytesIO()
    frames[0].save(gif, "GIF", save_all=True, append_images=frames[1:])
    animated = look_at(output_ref("x.gif"), gif.getvalue())
    assert animated.frames == 4 and "4 frames" in animated.line()
    video = look_at(output_ref("clip.mp4"), b"\x00" * 1000)
    assert video.as_json() == {"name": "clip.mp4 [output]", "line": "clip.mp4 [output]: MP4",
                               "format": "mp4", "bytes": 1000, "pixelsChecked": False,
                               "findings": []}  # fmt: skip
    with pytest.raises(BadImage):
        whole = png(draw=True)
        look_at(output_ref("cut.png"), whole[: len(whole) // 2])


async def test_the_route_looks_at_each_file_and_says_why_one_was_not_read(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    app = await start_app(tmp_path / "data", {}, outputs=FolderOutputs(folders))
    try:
        body = {
            "outputs": [
                "ComfyUI_00001_.png [output]",
                {"filename": "black.png", "subfolder": "sub", "type": "output"},
                "gone.png [temp]",
            ],
            "expected": {"width": 64, "height": 48},
            "decoded": ["sub/black.png [output]"],  # its SaveImage has a VAEDecode upstream
        }
        async with await app.post("/api/assistant/outputs/look", body) as resp:
            assert resp.status == 200
            looked = (await resp.json())["outputs"]
        assert [o.get("findings") for o in looked[:2]] == [
            [],
            ["all black (the usual sign of a failed VAE decode: NaN values)"],
        ]
        body = {"outputs": ["sub/black.png [output]"], "decoded": ["ComfyUI_00001_.png [output]"]}
        async with await app.post("/api/assistant/outputs/look", body) as resp:
            assert (await resp.json())["outputs"][0]["line"] == (
                "sub/black.png [output]: PNG 64×48, all black"
            )  # (no decode upstream of it: no cause)
        assert looked[2] == {
            "name": "gone.png [temp]", "status": 404,
            "error": "gone.png [temp] is not in ComfyUI's temp folder",
        }  # fmt: skip
        for bad, says in (
            ([], "send a JSON object"),
            ({"outputs": []}, "outputs must be a list of the files a run made"),
            ({"outputs": ["x.png"] * 17}, "send at most 16 at a time"),
            ({"outputs": ["../x.png [output]"]}, "must be a folder inside ComfyUI's output folder"),
            ({"outputs": ["x.txt"]}, "is not an image or a video"),
            ({"outputs": [3]}, "an output is a file name or {filename, subfolder, type}"),
            ({"outputs": ["x.png"], "expected": {"width": 0, "height": 5}}, "expected must be"),
            ({"outputs": ["x.png"], "decoded": "x.png"}, "decoded must be a list of the files"),
            ({"outputs": ["x.png"], "decoded": ["x.png"] * 17}, "decoded has 17 files"),
        ):
            async with await app.post("/api/assistant/outputs/look", bad) as resp:
                assert resp.status == 400, bad
                assert says in (await resp.json())["error"], bad
    finally:
        await app.close()


async def test_standalone_without_a_comfyui_says_what_to_set(tmp_path: Path) -> None:
    app = await start_app(tmp_path / "data", {})
    try:
        async with await app.post("/api/assistant/outputs/look", {"outputs": ["x.png"]}) as resp:
            looked = (await resp.json())["outputs"]
        assert looked[0]["status"] == 503 and "set COMFYUI_URL" in looked[0]["error"]
    finally:
        await app.close()
