"""The README's "Use it from Claude, Cursor or any MCP client" section says what the server
offers: its list of tools offered and not offered is the one mcp_server/tools.py makes
(scripts/gen_panel_types.py writes it), and its picture of an approval is there, small."""

from __future__ import annotations

from pathlib import Path

from comfyui_assistant.mcp_server.tools import NOT_OFFERED, offered_specs, readme_list

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "<!-- mcp tools: written by scripts/gen_panel_types.py -->\n"


def section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split("## Use it from Claude, Cursor or any MCP client\n", 1)[1].split("\n## ")[0]


def test_the_readme_lists_the_tools_offered_and_not_offered() -> None:
    listed = section().split(BEGIN, 1)[1].split("<!-- end -->\n", 1)[0]
    assert listed == readme_list()
    words = listed.replace(",", " ").replace(".", " ").replace(":", " ").split()
    named = {w.strip("`") for w in words if w.startswith("`")}
    assert named == {s.name for s in offered_specs()} | set(NOT_OFFERED)
    assert set(NOT_OFFERED) == {
        "searchConversation",
        "recallToolResult",
        "readSystemContext",
        "delegate",
    }
    for name, why in NOT_OFFERED.items():
        assert f"`{name}`: {why}." in " ".join(listed.split())


def test_the_readme_shows_an_approval_for_an_mcp_client() -> None:
    assert "](docs/images/mcp-approval.png)" in section()
    picture = ROOT / "docs" / "images" / "mcp-approval.png"
    data = picture.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) <= 150 * 1024
