"""The built panel as ComfyUI loads it: one self-contained ES module within its size budget,
and each translation beside it as a JSON file the module fetches when its language is chosen."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

UI = Path(__file__).resolve().parent.parent / "ui"
DIST = UI / "dist"
BUDGET_GZIP = 450 * 1024
# ui/src/i18n/shipped.ts: the locales with a translation (locales/<tag>.ts)
SHIPPED = re.compile(r"SHIPPED_TAGS = \[([^\]]*)\]")
# ui/src/i18n/messages.ts: each key of the English table, two spaces in
ENGLISH_KEY = re.compile(r'^  "([^"]+)":', re.MULTILINE)


def shipped_tags() -> list[str]:
    found = SHIPPED.search((UI / "src" / "i18n" / "shipped.ts").read_text(encoding="utf-8"))
    assert found, "SHIPPED_TAGS in ui/src/i18n/shipped.ts"
    return re.findall(r'"([^"]+)"', found.group(1))


def test_the_panel_is_one_module_within_budget():
    files = sorted(p.relative_to(DIST).as_posix() for p in DIST.rglob("*") if p.is_file())
    # ComfyUI loads every .js here, in every folder, as an extension: one module, its licence
    # notices and the translations, which are only served
    locales = sorted(f"locales/{tag}.json" for tag in shipped_tags())
    assert len(locales) == 14
    assert files == ["THIRD_PARTY_LICENSES.txt", "comfyui-assistant.js", *locales]
    code = (DIST / "comfyui-assistant.js").read_bytes()
    assert len(gzip.compress(code, 9)) <= BUDGET_GZIP
    imports = re.findall(rb'(?:^|[;}\s])import[^"\'()]*?from\s*"([^"]+)"', code)
    assert set(imports) == {b"../../scripts/app.js"}  # React and the rest are inside
    assert b"process.env.NODE_ENV" not in code


def test_each_translation_is_a_json_table_of_every_english_key():
    """The module fetches ui/dist/locales/<tag>.json (ui/src/i18n/tables.ts); a key it lacks would
    show in English."""
    english = ENGLISH_KEY.findall((UI / "src" / "i18n" / "messages.ts").read_text(encoding="utf-8"))
    assert len(english) > 400 and len(set(english)) == len(english)
    for tag in shipped_tags():
        table = json.loads((DIST / "locales" / f"{tag}.json").read_text(encoding="utf-8"))
        assert sorted(table) == sorted(english), tag
        assert all(isinstance(v, (str, dict)) and v for v in table.values()), tag


def test_the_panel_css_is_scoped():
    """Nothing the panel styles may leak into ComfyUI's own UI."""
    code = (DIST / "comfyui-assistant.js").read_text(encoding="utf-8")
    sheets = re.findall(r"`(\.cua-root\{[^`]*)`", code)
    assert sheets, "the panel's stylesheet is inside the bundle"
    sheet = re.sub(r"@keyframes[^{]*\{(?:[^{}]*\{[^{}]*\})*[^{}]*\}", "", sheets[0])
    sheet = re.sub(r"@media[^{]*\{", "", sheet)
    selectors = [s.strip() for block in re.findall(r"([^{}]+)\{", sheet) for s in block.split(",")]
    assert selectors and all(s.startswith(".cua-") for s in selectors), [
        s for s in selectors if not s.startswith(".cua-")
    ]


def test_the_licence_notices_name_every_runtime_dependency_with_its_licence_text():
    """Generated at build from what the bundle kept (ui/license-notices.ts)."""
    import json

    notices = (DIST / "THIRD_PARTY_LICENSES.txt").read_text(encoding="utf-8")
    package = json.loads((DIST.parent / "package.json").read_text(encoding="utf-8"))
    # (@assistant-ui/react-ai-sdk only re-exports @assistant-ui/ai-sdk: no code of its own)
    names = ["react", "react-dom", "ai", "@ai-sdk/react", "@assistant-ui/react", "remark-gfm"]
    for name in names:
        version = package["dependencies"][name]
        assert re.search(rf"^{re.escape(name)} {re.escape(version)} \(", notices, re.M), name
    react = notices.split("\nreact 19", 1)[1].split("=" * 78, 2)[1]
    assert "Permission is hereby granted" in react and "Meta Platforms" in react


async def test_the_standalone_server_serves_the_translations_beside_the_module(assistant):
    """Where the module fetches them (ui/src/i18n/tables.ts), as ComfyUI serves WEB_DIRECTORY."""
    base = assistant.base + "/extensions/comfyui-assistant"
    async with assistant.session.get(base + "/locales/ar.json") as resp:
        assert resp.status == 200 and (await resp.json())["composer.send"] == "إرسال"
    async with assistant.session.get(assistant.base + "/api/extensions") as resp:
        assert await resp.json() == ["/extensions/comfyui-assistant/comfyui-assistant.js"]
